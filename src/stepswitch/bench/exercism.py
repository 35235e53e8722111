"""`ssw bench import exercism DIR`: exercises in the layout of Exercism's Python track as a suite.

    DIR/<slug>/
      <module>.py            the stub the student fills in
      <module>_test.py       the exercise's tests
      .meta/example.py       a solution (the reference)
      .docs/instructions.md  what to do (+ instructions.append.md when there is one)
      .meta/config.json      optional: {"files": {"solution": [...], "test": [...],
                             "example": [...]}} names the three files instead

Each exercise becomes a task: repo/ holds the stub and a visible test that it imports (the
exercise's own tests fail on the stub, so they are the hidden tests, as HumanEval's are), the
instruction is the exercise's, and the reference replaces the stub with the example. An exercise
this cannot take (a file missing, more than one solution file, a name that is no task id) is
refused with its reason, and the others are written. Nothing of DIR is run here; `ssw bench
validate` runs the result.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.bench.humaneval import patch_of
from stepswitch.bench.import_source import LINKED_TASK, Allowance, SourceFolder
from stepswitch.bench.imported_task import (
    imported_task_head,
    write_task_folder,
)
from stepswitch.errors import UsageError

VISIBLE_TEST = '''\
"""The stub imports (the exercise's own tests are the hidden ones: they fail until it is done)."""

import {module}


def test_the_stub_imports():
    assert {module}.__name__ == "{module}"
'''

INSTRUCTION_TAIL = "\nWrite your solution in `{file}`; keep the names the stub defines.\n"


@dataclass(frozen=True)
class Exercise:
    name: str  # the exercise's folder name
    why: str = ""  # why it was refused; "" when written
    folder: Path | None = None


def _task_id(slug: str) -> str | None:
    name = re.sub(r"[^a-z0-9_-]+", "-", slug.lower()).strip("-_")
    return name if re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name) else None


def _files(folder: Path) -> tuple[str, str, str]:
    """(solution, test, example) relative to the exercise's folder; raises ValueError why not."""
    config = folder / ".meta" / "config.json"
    if config.is_file():
        try:
            named: Any = json.loads(config.read_text(encoding="utf-8")).get("files", {})
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
            raise ValueError(f".meta/config.json is not JSON with a files table ({exc})") from exc
        picked = []
        for key in ("solution", "test", "example"):
            value = named.get(key) if isinstance(named, dict) else None
            if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], str):
                raise ValueError(f".meta/config.json: files.{key} must name exactly one file")
            picked.append(value[0])
        solution, test, example = picked
    else:
        module = folder.name.replace("-", "_")
        solution, test, example = f"{module}.py", f"{module}_test.py", ".meta/example.py"
    for rel, what in ((solution, "stub"), (test, "tests"), (example, "example solution")):
        path = folder / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise ValueError(f"{rel}: a path outside the exercise")
        if path.is_symlink():
            raise ValueError(f"the {what} file {rel} is a link: only files are taken")
        if not path.is_file():
            raise ValueError(f"no {what} file {rel}")
    if "/" in solution or not solution.endswith(".py"):
        raise ValueError(f"the stub {solution} is not a module at the exercise's top")
    return solution, test, example


def _instruction(folder: Path, solution: str) -> str:
    docs = folder / ".docs"
    parts = [docs / "instructions.md", docs / "instructions.append.md"]
    text = "\n".join(p.read_text(encoding="utf-8").strip() + "\n" for p in parts if p.is_file())
    if not text.strip():
        raise ValueError("no .docs/instructions.md")
    return text + INSTRUCTION_TAIL.format(file=solution)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path.name} is not UTF-8 text") from exc


def exercise_files(folder: Path, source: str) -> tuple[str, dict[str, str]]:
    """The task's id and its folder's files for one exercise; raises ValueError with why it
    cannot be one."""
    task_id = _task_id(folder.name)
    if task_id is None:
        raise ValueError(f"{folder.name!r} gives no task id")
    solution, test, example = _files(folder)
    stub, reference = _read(folder / solution), _read(folder / example)
    module = solution.removesuffix(".py")
    fields = {"slug": folder.name, "id": task_id, "source": source, "module": module}
    return task_id, {
        **imported_task_head(
            f"Exercism exercise {folder.name!r}, from {source} (ssw bench import exercism).",
            task_id,
            "feature",
            _instruction(folder, solution),
            f"exercism-{task_id}",
            timeout_s=120,
            task_timeout_s=900,
        ),
        f"repo/{solution}": stub,
        f"repo/test_{module}_imports.py": VISIBLE_TEST.format(**fields),
        f"tests/{Path(test).name}": _read(folder / test),
        "solution/solution.patch": patch_of(stub, reference, solution),
    }


def import_exercism(source: Path, out: Path) -> list[Exercise]:
    """Every exercise folder of `source` (one holding .docs/ or .meta/) as a task under `out`,
    each read from a copy import_source made of it (no link followed, sizes bounded)."""
    if not source.is_dir():
        raise UsageError(f"{source}: no such folder of exercises")
    marks = (".meta", ".docs")
    with SourceFolder(source) as tree, tempfile.TemporaryDirectory(prefix="ssw-import-") as tmp:
        names, links = tree.folders()
        folders = [n for n in names if any(tree.exists(f"{n}/{m}") for m in marks)]
        linked = [n for n in links if any((source / n / m).is_dir() for m in marks)]
        if not folders and not linked:
            raise UsageError(f"{source}: no exercise folders (a folder holding .meta/ or .docs/)")
        found = [Exercise(name, f"{name} {LINKED_TASK}") for name in linked]
        for name in folders:
            copy = Path(tmp) / name
            try:
                tree.copy(name, copy, Allowance())
                task_id, files = exercise_files(copy, source.name)
            except ValueError as why:
                found.append(Exercise(name, str(why)))
                continue
            dest = out / task_id
            if dest.exists():
                found.append(Exercise(name, f"{dest} exists: import into an empty folder"))
                continue
            write_task_folder(dest, files)
            found.append(Exercise(name, "", dest))
    return sorted(found, key=lambda e: e.name)
