"""`ssw bench import exercism DIR`: exercises in the layout of Exercism's Python track as a suite.

    DIR/<slug>/
      <module>.py            the stub the student fills in
      <module>_test.py       the exercise's tests
      .meta/example.py       a solution (the reference)
      .docs/instructions.md  what to do (+ instructions.append.md when there is one)
      .meta/config.json      optional: {"files": {"solution": [...], "test": [...],
                             "example": [...], "editor": [...]}} names the files instead
                             (editor: read-only helper modules the tests import)

Each exercise becomes a task: repo/ holds the stub and a visible test that it imports (the
exercise's own tests fail on the stub, so they are the hidden tests, as HumanEval's are), the
instruction is the exercise's, and the reference replaces the stub with the example. An exercise
this cannot take (a file missing, more than one solution file, a name that is no task id) is
refused with its reason, and the others are written. Nothing of DIR is run here; `ssw bench
validate` runs the result.
"""

from __future__ import annotations

import ast
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
    whole_run_timeout_s,
    write_task_folder,
)
from stepswitch.errors import UsageError
from stepswitch.util.python_ast import parse_python

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


@dataclass(frozen=True)
class ExerciseFiles:
    """An exercise's files, relative to its folder, as .meta/config.json names them."""

    solution: str  # the stub
    tests: tuple[str, ...]
    example: str
    helpers: tuple[str, ...] = ()  # `editor` files: read-only modules the tests import


def _named(config: Path) -> ExerciseFiles:
    try:
        named: Any = json.loads(config.read_text(encoding="utf-8")).get("files", {})
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError) as exc:
        raise ValueError(f".meta/config.json is not JSON with a files table ({exc})") from exc
    named = named if isinstance(named, dict) else {}
    lists = {}
    for key in ("solution", "test", "example", "editor"):
        value = named.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f".meta/config.json: files.{key} must be a list of file names")
        lists[key] = value
    for key in ("solution", "example"):
        if len(lists[key]) != 1:
            raise ValueError(f".meta/config.json: files.{key} must name exactly one file")
    if not lists["test"]:
        raise ValueError(".meta/config.json: files.test names no file")
    return ExerciseFiles(
        lists["solution"][0], tuple(lists["test"]), lists["example"][0], tuple(lists["editor"])
    )


def _files(folder: Path) -> ExerciseFiles:
    """The exercise's files; raises ValueError why they cannot be taken."""
    config = folder / ".meta" / "config.json"
    if config.is_file():
        files = _named(config)
    else:
        module = folder.name.replace("-", "_")
        files = ExerciseFiles(f"{module}.py", (f"{module}_test.py",), ".meta/example.py")
    named = [(files.solution, "stub"), (files.example, "example solution")]
    named += [(t, "tests") for t in files.tests] + [(h, "helper") for h in files.helpers]
    for rel, what in named:
        path = folder / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise ValueError(f"{rel}: a path outside the exercise")
        if path.is_symlink():
            raise ValueError(f"the {what} file {rel} is a link: only files are taken")
        if not path.is_file():
            raise ValueError(f"no {what} file {rel}")
    for rel in (files.solution, *files.helpers):
        if "/" in rel or not rel.endswith(".py"):
            raise ValueError(f"{rel} is not a module at the exercise's top")
    return files


_SKIPS = {("unittest", "skip"), ("mark", "skip")}  # @unittest.skip(...), @pytest.mark.skip(...)


def _is_skip(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if not isinstance(target, ast.Attribute):
        return False
    owner = target.value
    owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
    return (owner_name, target.attr) in _SKIPS


def unskipped(text: str) -> tuple[str, int]:
    """The tests with their unconditional skips removed, as Exercism's runner runs every test
    (conditional ones, skipIf, stay), and how many tests there are."""
    try:
        tree = parse_python(text)
    except SyntaxError as exc:
        raise ValueError(f"the tests do not parse ({exc.msg}, line {exc.lineno})") from exc
    dropped: set[int] = set()
    tests = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            tests += isinstance(node, ast.FunctionDef) and node.name.startswith("test")
            for decorator in node.decorator_list:
                if _is_skip(decorator):
                    end = decorator.end_lineno or decorator.lineno
                    dropped.update(range(decorator.lineno, end + 1))
    lines = text.splitlines(keepends=True)
    kept = "".join(line for n, line in enumerate(lines, start=1) if n not in dropped)
    return kept, tests


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
    files = _files(folder)
    stub, reference = _read(folder / files.solution), _read(folder / files.example)
    module = files.solution.removesuffix(".py")
    fields = {"slug": folder.name, "id": task_id, "source": source, "module": module}
    hidden: dict[str, str] = {}
    count = 0
    for rel in files.tests:
        text, tests = unskipped(_read(folder / rel))
        hidden[f"tests/{Path(rel).name}"] = text
        count += tests
    helpers = {h: _read(folder / h) for h in files.helpers}
    return task_id, {
        **imported_task_head(
            f"Exercism exercise {folder.name!r}, from {source} (ssw bench import exercism).",
            task_id,
            "feature",
            _instruction(folder, files.solution),
            f"exercism-{task_id}",
            timeout_s=whole_run_timeout_s(count),
            task_timeout_s=900,
        ),
        f"repo/{files.solution}": stub,
        # The helpers the tests import: visible beside the stub, and the hidden tests' own copy.
        **{f"repo/{h}": text for h, text in helpers.items()},
        **{f"tests/{h}": text for h, text in helpers.items()},
        f"repo/test_{module}_imports.py": VISIBLE_TEST.format(**fields),
        **hidden,
        "solution/solution.patch": patch_of(stub, reference, files.solution),
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
