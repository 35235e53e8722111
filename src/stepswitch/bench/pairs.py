"""`ssw bench import pairs --buggy DIR --correct DIR --tests DIR`: buggy/correct program pairs
with JSON test data (the layout of QuixBugs-style sets) as a suite.

    --buggy DIR     <name>.py, each defining a function <name> with a bug
    --correct DIR   <name>.py, the same program fixed
    --tests DIR     <name>.json, one test case a line: [[arg, ...], expected]

Each program becomes a task: repo/ holds the buggy module and a visible test that it imports,
the hidden test calls `<name>(*args)` once per line of the data (kept beside it in tests/) and
compares with the expected value, and the reference is the correct program as a patch. A program
this cannot take (no counterpart, no data, a line that is not `[[args], expected]`, no function
of its name in both files) is refused with its reason; the others are written. Nothing is run
here: `ssw bench validate` tells whether a buggy program fails its data.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from stepswitch.bench.humaneval import patch_of
from stepswitch.bench.import_source import Allowance, SourceFolder, text_of
from stepswitch.bench.imported_task import (
    imported_task_head,
    whole_run_timeout_s,
    write_task_folder,
)
from stepswitch.errors import UsageError
from stepswitch.util.python_ast import parse_python

INSTRUCTION = """\
`{name}` in `{name}.py` gives wrong results for some inputs. Find the bug and fix it; keep the
function's name and signature.
"""

VISIBLE_TEST = '''\
"""The module imports and defines {name} (its test data is hidden)."""

import {name}


def test_{name}_is_defined():
    assert callable({name}.{name})
'''

HIDDEN_TEST = '''\
"""{name}: each line of {name}.json is [[args], expected]; the fixed function must give it."""

import json
from pathlib import Path

import pytest

from {name} import {name}

CASES = [
    json.loads(line)
    for line in Path(__file__).with_name("{name}.json").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.mark.parametrize(("args", "expected"), CASES, ids=[str(n) for n in range(len(CASES))])
def test_{name}(args, expected):
    assert {name}(*args) == expected
'''


@dataclass(frozen=True)
class Pair:
    name: str
    why: str = ""  # why it was refused; "" when written
    folder: Path | None = None


def check_defines(text: str, name: str, which: str) -> None:
    try:
        tree = parse_python(text)
    except SyntaxError as exc:
        raise ValueError(
            f"the {which} program does not parse ({exc.msg}, line {exc.lineno})"
        ) from exc
    if not any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body):
        raise ValueError(f"the {which} program defines no function {name}")


def _cases(text: str, file: str) -> str:
    """The data's lines, checked to be [[args], expected]; the text as it is."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{file} has no test case")
    for n, line in enumerate(lines, start=1):
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{file} line {n} is not JSON ({exc.msg})") from exc
        if not (isinstance(case, list) and len(case) == 2 and isinstance(case[0], list)):
            raise ValueError(f"{file} line {n} is not [[args], expected]")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PairSources:
    """The three folders of a pairs set, each read without following a link."""

    buggy: SourceFolder
    correct: SourceFolder
    tests: SourceFolder

    def read(self, name: str) -> tuple[str, str, str]:
        """Program `name`'s buggy and correct text and its test data, within one allowance."""
        allowance = Allowance()
        found = []
        for folder, file, what in (
            (self.buggy, f"{name}.py", "buggy program"),
            (self.correct, f"{name}.py", "correct program"),
            (self.tests, f"{name}.json", "test data"),
        ):
            if not folder.exists(file):
                raise ValueError(f"no {what} {file}")
            shown = f"{folder.root.name}/{file}"
            found.append(text_of(folder.read(file, allowance, shown), shown))
        return found[0], found[1], found[2]


def pair_files(name: str, before: str, after: str, data: str, source: str) -> dict[str, str]:
    """The task folder's files for program `name` from `source` (the buggy folder's name);
    raises ValueError why it cannot be one."""
    check_defines(before, name, "buggy")
    check_defines(after, name, "correct")
    if before == after:
        raise ValueError("the buggy and the correct program are the same")
    cases = _cases(data, f"{name}.json")
    fields = {"name": name, "id": name.replace("_", "-"), "source": source}
    return {
        **imported_task_head(
            f"Program {name!r}, a buggy/correct pair from {source} (ssw bench import pairs).",
            fields["id"],
            "bugfix",
            INSTRUCTION.format(**fields),
            f"pairs-{fields['id']}",
            timeout_s=whole_run_timeout_s(cases.count("\n")),
            task_timeout_s=900,
        ),
        f"repo/{name}.py": before,
        f"repo/test_{name}_defined.py": VISIBLE_TEST.format(**fields),
        f"tests/test_{name}.py": HIDDEN_TEST.format(**fields),
        f"tests/{name}.json": cases,
        "solution/solution.patch": patch_of(before, after, f"{name}.py"),
    }


def import_pairs(buggy: Path, correct: Path, tests: Path, out: Path) -> list[Pair]:
    """Every `<name>.py` of `buggy` (but `__init__.py`) as a task under `out`; every file read
    through import_source (no link followed, sizes bounded)."""
    for flag, folder in (("--buggy", buggy), ("--correct", correct), ("--tests", tests)):
        if not folder.is_dir():
            raise UsageError(f"{flag} {folder}: no such folder")
    with SourceFolder(buggy) as b, SourceFolder(correct) as c, SourceFolder(tests) as t:
        sources = PairSources(b, c, t)
        entries = [e for e in b.tree.entries(".") if e.name.endswith(".py")]
        programs = sorted(e.name[:-3] for e in entries if e.name != "__init__.py")
        if not programs:
            raise UsageError(f"--buggy {buggy}: no <name>.py programs")

        def files_of(name: str) -> dict[str, str]:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise ValueError(f"{name!r} is not a module name ssw can give a task")
            return pair_files(name, *sources.read(name), buggy.name)

        return [write_program(out, name, files_of) for name in programs]


def write_program(out: Path, name: str, files_of: Callable[[str], dict[str, str]]) -> Pair:
    """Program `name` written as a task under `out` from `files_of(name)`, or why not: what
    files_of raises (ValueError), or a task folder already there."""
    try:
        files = files_of(name)
    except ValueError as why:
        return Pair(name, str(why))
    dest = out / name.replace("_", "-")
    if dest.exists():
        return Pair(name, f"{dest} exists: import into an empty folder")
    write_task_folder(dest, files)
    return Pair(name, "", dest)
