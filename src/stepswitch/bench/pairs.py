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
from dataclasses import dataclass
from pathlib import Path

from stepswitch.bench.humaneval import patch_of
from stepswitch.bench.task import imported_pyproject, imported_task_toml, write_task_folder
from stepswitch.errors import UsageError

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


def _defines(text: str, name: str, which: str) -> None:
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(
            f"the {which} program does not parse ({exc.msg}, line {exc.lineno})"
        ) from exc
    if not any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body):
        raise ValueError(f"the {which} program defines no function {name}")


def _cases(path: Path) -> str:
    """The data's lines, checked to be [[args], expected]; the text as it is."""
    if not path.is_file() or path.is_symlink():
        raise ValueError(f"no test data {path.name}")
    text = path.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path.name} has no test case")
    for n, line in enumerate(lines, start=1):
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path.name} line {n} is not JSON ({exc.msg})") from exc
        if not (isinstance(case, list) and len(case) == 2 and isinstance(case[0], list)):
            raise ValueError(f"{path.name} line {n} is not [[args], expected]")
    return "\n".join(lines) + "\n"


def pair_files(name: str, buggy: Path, correct: Path, tests: Path) -> dict[str, str]:
    """The task folder's files for program `name`; raises ValueError why it cannot be one."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"{name!r} is not a module name ssw can give a task")
    fixed = correct / f"{name}.py"
    if not fixed.is_file() or fixed.is_symlink():
        raise ValueError(f"no correct program {name}.py in {correct}")
    try:
        before, after = (buggy / f"{name}.py").read_text("utf-8"), fixed.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError("a program is not UTF-8 text") from exc
    _defines(before, name, "buggy")
    _defines(after, name, "correct")
    if before == after:
        raise ValueError("the buggy and the correct program are the same")
    cases = _cases(tests / f"{name}.json")
    fields = {"name": name, "id": name.replace("_", "-"), "source": buggy.name}
    return {
        "task.toml": imported_task_toml(
            f"Program {name!r}, a buggy/correct pair from {buggy.name} (ssw bench import pairs).",
            fields["id"],
            "bugfix",
            timeout_s=300,
            task_timeout_s=900,
        ),
        "instruction.md": INSTRUCTION.format(**fields),
        "repo/pyproject.toml": imported_pyproject(f"pairs-{fields['id']}"),
        f"repo/{name}.py": before,
        f"repo/test_{name}_defined.py": VISIBLE_TEST.format(**fields),
        f"tests/test_{name}.py": HIDDEN_TEST.format(**fields),
        f"tests/{name}.json": cases,
        "solution/solution.patch": patch_of(before, after, f"{name}.py"),
    }


def import_pairs(buggy: Path, correct: Path, tests: Path, out: Path) -> list[Pair]:
    """Every `<name>.py` of `buggy` (but `__init__.py`) as a task under `out`."""
    for flag, folder in (("--buggy", buggy), ("--correct", correct), ("--tests", tests)):
        if not folder.is_dir():
            raise UsageError(f"{flag} {folder}: no such folder")
    programs = sorted(
        p.stem for p in buggy.glob("*.py") if p.name != "__init__.py" and not p.is_symlink()
    )
    if not programs:
        raise UsageError(f"--buggy {buggy}: no <name>.py programs")
    found = []
    for name in programs:
        try:
            files = pair_files(name, buggy, correct, tests)
        except ValueError as why:
            found.append(Pair(name, str(why)))
            continue
        dest = out / name.replace("_", "-")
        if dest.exists():
            found.append(Pair(name, f"{dest} exists: import into an empty folder"))
            continue
        write_task_folder(dest, files)
        found.append(Pair(name, "", dest))
    return found
