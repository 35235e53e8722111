"""A grading folder (`bench.grading_folder` runs the hidden tests in it): a run's tree copied,
the start's test files, pytest configuration and declared test data put back, what could stand
in for the test runner removed, a link leading out of the tree or a module shadowing the runner
refused, and the hidden tests copied to `.ssw_hidden/` (docs/decisions/0015-grading.md).
"""

from __future__ import annotations

import os
import shutil
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from stepswitch.bench.pytest_ids import is_test_module
from stepswitch.bench.task import HIDDEN_FOLDER, Task
from stepswitch.bench.task_data import covers
from stepswitch.gates.shadowing import shadowing_modules, twin_modules
from stepswitch.util.toml import parse_toml

# Restored wherever they are (`.pytest.ini` comes before pyproject.toml in pytest's search).
TEST_NAMES = ("conftest.py", "pytest.ini", ".pytest.ini")
# Names at the top of a tree that would be imported instead of the runner or at start-up.
SHADOWS = (
    "pytest.py",
    "pytest",
    "_pytest",
    "pluggy",
    "py.py",
    "sitecustomize.py",
    "usercustomize.py",
)


class TreeRefused(Exception):
    """The graded tree cannot be laid out as committed (a link leading out of it): the
    contestant's doing, so a failed task run, not a harness error."""


def copy_tree(source: Path, dest: Path) -> None:
    """Copy a project's files, without its git folder."""
    shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))


def is_test_file(rel: Path) -> bool:
    return rel.name in TEST_NAMES or is_test_module(rel)


def _pytest_table_of(path: Path) -> tuple[bool, object]:
    try:
        tool = parse_toml(path.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False, None
    return True, tool.get("pytest") if isinstance(tool, dict) else None


def _restore_pytest_config(start: Path, dest: Path) -> bool:
    """Give dest/pyproject.toml the start's [tool.pytest...] tables; True if it changed."""
    target = dest / "pyproject.toml"
    ok, theirs = _pytest_table_of(target)
    _, ours = _pytest_table_of(start / "pyproject.toml")
    if not ok or theirs == ours:
        return False
    data = parse_toml(target.read_text(encoding="utf-8"))
    tool = data.setdefault("tool", {})
    if ours is None:
        tool.pop("pytest", None)
    else:
        tool["pytest"] = ours
    target.write_text(tomli_w.dumps(data), encoding="utf-8")
    return True


def lay_out(task: Task, tree: Path, dest: Path) -> list[str]:
    """Make `dest` a grading folder from the run's `tree`; returns what was put back or removed.
    The hidden tests go to `.ssw_hidden/`, or with the task's `overlay` over the tree at their
    own paths. TreeRefused when
    the tree holds a link leading out of it (the copying below would follow it on the host)."""
    copy_tree(tree, dest)
    _refuse_links_out(dest)
    start = task.repo
    changed: list[str] = []
    for path in sorted(start.rglob("*")):
        rel = path.relative_to(start)
        if path.is_file() and is_test_file(rel):
            target = dest / rel
            if not target.is_file() or target.read_bytes() != path.read_bytes():
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.is_dir() or target.is_symlink():
                    _remove(target)
                shutil.copy2(path, target)
                changed.append(f"restored {rel.as_posix()}")
    for path in sorted(dest.rglob("*")):
        rel = path.relative_to(dest)
        if rel.name in TEST_NAMES and not (start / rel).is_file():
            _remove(path)
            changed.append(f"removed {rel.as_posix()}")
    for name in SHADOWS:
        if (dest / name).exists() and not (start / name).exists():
            _remove(dest / name)
            changed.append(f"removed {name}")
    for pth in dest.glob("*.pth"):
        if not (start / pth.name).exists():
            _remove(pth)
            changed.append(f"removed {pth.name}")
    _refuse_shadowing(start, dest)  # what is left of the names SHADOWS does not cover
    if _restore_pytest_config(start, dest):
        changed.append("restored pyproject.toml [tool.pytest]")
    changed += _restore_test_data(task, dest)
    folder = dest / HIDDEN_FOLDER
    if folder.exists() or folder.is_symlink():
        _remove(folder)
    laid: list[str] = []
    if task.spec.tests.overlay:
        laid = _overlay(task.hidden_tests, dest)
    else:
        copy_tree(task.hidden_tests, folder)
    _read_only_data[dest.resolve()] = _data_mounts(dest, [*task.data_files, *laid])
    return changed


def _overlay(hidden: Path, dest: Path) -> list[str]:
    """The hidden tests over the tree at their own paths, what lay there replaced (as a
    SWE-bench test patch changes the repository's test files); their paths, to keep read-only."""
    laid = []
    for rel in _entries(hidden):
        source, target = hidden / rel, dest / rel
        _real_folders(dest, Path(rel).parent)
        if target.is_symlink() or target.is_dir():
            _remove(target)
        shutil.copy2(source, target)
        laid.append(rel)
    return laid


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _entries(root: Path) -> list[str]:
    """Every file and link under `root` (links not followed), posix, relative, sorted."""
    found = []
    for top, folders, files in os.walk(root):
        for name in [*files, *(f for f in folders if os.path.islink(os.path.join(top, f)))]:
            found.append(Path(top, name).relative_to(root).as_posix())
    return sorted(found)


def _refuse_links_out(root: Path) -> None:
    """TreeRefused naming the first link that is absolute or resolves outside `root`."""
    inside = Path(os.path.realpath(root))
    for rel in _entries(root):
        path = root / rel
        if path.is_symlink():
            target = os.readlink(path)
            if os.path.isabs(target) or not Path(os.path.realpath(path)).is_relative_to(inside):
                raise TreeRefused(f"{rel} is a symbolic link leading out of the tree ({target})")


def _refuse_shadowing(start: Path, dest: Path) -> None:
    """TreeRefused naming the modules the tree added at its root (first on `python -m
    pytest`'s sys.path) or in `src/` that shadow the standard library or a distribution
    installed beside the grading interpreter (an `iniconfig.py` there runs inside pytest before
    any test), and any package it added beside a module of the same name (the hidden tests
    would import the package)."""
    roots = [dest, *([dest / "src"] if (dest / "src").is_dir() else [])]
    start_paths = set(_entries(start))
    found = shadowing_modules(roots, dest, start_paths, Path(sys.executable))
    found += twin_modules(dest, set(_entries(dest)) - start_paths, start_paths)
    if found:
        raise TreeRefused("; ".join(found))


def _real_folders(root: Path, rel: Path) -> None:
    """Make each folder of `rel` under `root` a real folder (not a link, not a file)."""
    at = root
    for part in rel.parts:
        at = at / part
        if at.is_symlink() or (at.exists() and not at.is_dir()):
            _remove(at)
        at.mkdir(exist_ok=True)


def _restore_test_data(task: Task, dest: Path) -> list[str]:
    """The declared test data as the start has it: the tree's version of each file replaced,
    files the tree added where the globs reach removed (the hidden tests' own data is theirs)."""
    declared = task.spec.tests.data
    if not declared:
        return []
    data = task.data_files
    changed: list[str] = []
    for rel in _entries(dest):
        if covers(declared, rel) and rel not in data and not rel.startswith(HIDDEN_FOLDER + "/"):
            _remove(dest / rel)
            changed.append(f"removed {rel} (where test data is declared)")
    for rel in data:
        source, target = task.repo / rel, dest / rel
        _real_folders(dest, Path(rel).parent)
        if target.is_symlink() or target.is_dir():
            _remove(target)
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            shutil.copy2(source, target)
            changed.append(f"restored {rel} (declared test data)")
    return changed


@dataclass(frozen=True)
class DataMounts:
    """How the declared test data stays as laid out while the graded code runs."""

    read_only: tuple[Path, ...] = ()  # the data: whole folders of it, else its files
    pinned: tuple[Path, ...] = ()  # the folders leading to them, bound onto themselves writable


def _folders_of(rel: str) -> list[str]:
    """The folders leading to `rel`, outermost first: "a/b/c.json" gives "a", "a/b"."""
    parts = rel.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _data_mounts(dest: Path, data: Sequence[str]) -> DataMounts:
    """Read-only mounts for the data (a folder holding nothing else is one mount); the folders
    above them become mount points too, which cannot be renamed away with the data inside."""
    if not data:
        return DataMounts()
    declared = set(data)
    everything = _entries(dest)

    def only_data(folder: str) -> bool:
        return all(e in declared for e in everything if e.startswith(folder + "/"))

    mounts: list[str] = []
    for rel in data:
        whole = next((f for f in _folders_of(rel) if only_data(f)), rel)
        if whole not in mounts:
            mounts.append(whole)
    pinned = sorted({f for m in mounts for f in _folders_of(m)})
    return DataMounts(tuple(dest / m for m in mounts), tuple(dest / f for f in pinned))


# What lay_out made of each grading folder's declared test data, for the run's sandbox policy.
_read_only_data: dict[Path, DataMounts] = {}


def data_mounts(folder: Path) -> DataMounts:
    """What `lay_out` made of `folder`'s declared test data (none: no mounts)."""
    return _read_only_data.get(folder.resolve(), DataMounts())
