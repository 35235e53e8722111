"""Resolving an import as Python's path finder does, over a tree of files: the worktree as the
import sees it (`WorktreeFiles`) or the base commit's paths (`CommitFiles`). `resolve` gives
each step of importing a dotted name (protected_values.py compares the two trees' steps)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

_EXTENSION = re.compile(r"(?:\.[^./]+)?\.so\Z")  # what follows a module's name in `X.<tag>.so`


class Files(Protocol):
    """A tree of files by root-relative posix path ("" is the root)."""

    def is_file(self, rel: str) -> bool: ...
    def is_dir(self, rel: str) -> bool: ...
    def names(self, folder: str) -> Sequence[str]: ...


class WorktreeFiles:
    """The worktree as Python's import sees it: links followed, git-ignored files included."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _mode(self, rel: str) -> int:
        try:
            return os.stat(self.root / rel).st_mode
        except (OSError, ValueError):
            return 0

    def is_file(self, rel: str) -> bool:
        return stat.S_ISREG(self._mode(rel))

    def is_dir(self, rel: str) -> bool:
        return stat.S_ISDIR(self._mode(rel))

    def names(self, folder: str) -> Sequence[str]:
        try:
            return sorted(os.listdir(self.root / folder))
        except OSError:
            return []


class CommitFiles:
    """The files of the base commit, from its paths."""

    def __init__(self, paths: Collection[str]) -> None:
        self.files = set(paths)
        self.children: dict[str, set[str]] = {}
        for path in self.files:
            parts = PurePosixPath(path).parts
            for depth in range(len(parts)):
                self.children.setdefault("/".join(parts[:depth]), set()).add(parts[depth])

    def is_file(self, rel: str) -> bool:
        return rel in self.files

    def is_dir(self, rel: str) -> bool:
        return rel in self.children

    def names(self, folder: str) -> Sequence[str]:
        return sorted(self.children.get(folder, ()))


@dataclass(frozen=True)
class Step:
    """What one dotted name of an import resolves to."""

    name: str  # "textstats.constants"
    how: str  # "package", "extension module", "module", "bytecode", "namespace", "missing"
    file: str | None = None  # the file that runs; None for a namespace or nothing
    folders: tuple[str, ...] = ()  # where its submodules are looked for


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _module_file(files: Files, folder: str, stem: str) -> tuple[str, str] | None:
    """The file Python loads for module `stem` in `folder`, and what it is, in the order of its
    loaders: extension modules, then source, then bytecode."""
    for name in files.names(folder):
        rest = name[len(stem) :]
        if (
            name.startswith(stem)
            and _EXTENSION.fullmatch(rest)
            and files.is_file(_join(folder, name))
        ):
            return _join(folder, name), "extension module"
    for suffix, how in ((".py", "module"), (".pyc", "bytecode")):
        path = _join(folder, stem + suffix)
        if files.is_file(path):
            return path, how
    return None


def find_step(files: Files, name: str, locations: Sequence[str]) -> Step:
    """Where `name`'s last part is found along `locations`, as importlib's FileFinder and
    PathFinder find it: the first regular package or module wins; namespace folders count only
    when neither is found anywhere."""
    tail = name.rpartition(".")[2]
    portions: list[str] = []
    for folder in locations:
        below = _join(folder, tail)
        is_dir = files.is_dir(below)
        if is_dir and (init := _module_file(files, below, "__init__")) is not None:
            return Step(name, "package", init[0], (below,))
        found = _module_file(files, folder, tail)
        if found is not None:
            return Step(name, found[1], found[0])
        if is_dir:
            portions.append(below)
    return Step(name, "namespace", None, tuple(portions)) if portions else Step(name, "missing")


def resolve(files: Files, module: str, path: Sequence[str]) -> list[Step]:
    """Each step of importing `module` with sys.path `path`; it ends early where a step is not a
    package (the import would fail there)."""
    steps: list[Step] = []
    parts = module.split(".")
    locations: Sequence[str] = path
    for depth in range(1, len(parts) + 1):
        step = find_step(files, ".".join(parts[:depth]), locations)
        steps.append(step)
        if not step.folders:
            break
        locations = step.folders
    return steps
