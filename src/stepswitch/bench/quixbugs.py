"""`ssw bench import quixbugs DIR`: the Python programs of a QuixBugs checkout, tested as QuixBugs
tests them.

    DIR/python_programs/<name>.py          the program with its bug
    DIR/correct_python_programs/<name>.py  the same program fixed
    DIR/python_testcases/test_<name>.py    QuixBugs' own pytest file for it; the JSON-driven ones
                                           read DIR/json_testcases/<name>.json (load_testdata.py)
    DIR/python_testcases/node.py           the Node class the graph programs' tests build

A program is taken only when it has its test file, so `node.py` and the `*_test.py` drivers beside
the programs are not tasks. The hidden tests are QuixBugs' file with its switch between the two
versions (`if pytest.use_correct: ... else: ...`) turned into the import of the task's module, so
they compare as QuixBugs compares (a generator through list(), sqrt within its tolerance). A case
QuixBugs skips as too slow (`pytest.skip` under `input_data == <value>`) is left out of the data:
ssw counts a skipped hidden test as failed, so it is not run at all. Nothing is run here.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

from stepswitch.bench.humaneval import patch_of
from stepswitch.bench.import_source import Allowance, SourceFolder, text_of
from stepswitch.bench.imported_task import (
    imported_task_head,
    whole_run_timeout_s,
)
from stepswitch.bench.pairs import INSTRUCTION, VISIBLE_TEST, Pair, check_defines, write_program
from stepswitch.errors import UsageError
from stepswitch.util.python_ast import parse_python

PROGRAMS, CORRECT, TESTS, DATA = (
    "python_programs",
    "correct_python_programs",
    "python_testcases",
    "json_testcases",
)

# The hidden tests' load_testdata: the cases beside the tests (QuixBugs' reads ../json_testcases).
LOAD_TESTDATA = '''\
"""QuixBugs' load_json_testcases, reading the cases kept beside the tests."""

import json
from pathlib import Path


def load_json_testcases(algorithm):
    path = Path(__file__).with_name(f"{algorithm}.json")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
'''


@dataclass(frozen=True)
class HiddenTest:
    """QuixBugs' test file as the task runs it, and what it needs beside it."""

    text: str
    json_driven: bool  # it reads <name>.json through load_testdata
    needs_node: bool  # it imports node.Node
    slow_inputs: tuple[object, ...]  # inputs it skips as too slow
    functions: int  # its test functions


def _is_attribute(node: ast.AST, owner: str, name: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == name
        and isinstance(node.value, ast.Name)
        and node.value.id == owner
    )


def _calls_skip(node: ast.If) -> bool:
    return any(
        isinstance(n, ast.Call) and _is_attribute(n.func, "pytest", "skip")
        for stmt in node.body
        for n in ast.walk(stmt)
    )


def _slow_input(node: ast.If) -> object | None:
    """The input an `if ... input_data == <value>: pytest.skip(...)` leaves out, else None."""
    for n in ast.walk(node.test):
        if (
            isinstance(n, ast.Compare)
            and isinstance(n.left, ast.Name)
            and n.left.id == "input_data"
            and len(n.ops) == 1
            and isinstance(n.ops[0], ast.Eq)
        ):
            try:
                value: object = ast.literal_eval(n.comparators[0])
            except ValueError:
                return None
            return value
    return None


def _replace(text: str, edits: list[tuple[int, int, str]]) -> str:
    """`text` with whole lines [first, last] (1-based) replaced, the last edit first."""
    lines = text.splitlines(keepends=True)
    for first, last, new in sorted(edits, reverse=True):
        lines[first - 1 : last] = [new]
    return "".join(lines)


def hidden_test(name: str, text: str) -> HiddenTest:
    """QuixBugs' `test_<name>.py` as the task's hidden test; raises ValueError why it cannot be."""
    try:
        tree = parse_python(text)
    except SyntaxError as exc:
        raise ValueError(f"test_{name}.py does not parse ({exc.msg}, line {exc.lineno})") from exc
    edits: list[tuple[int, int, str]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and _is_attribute(stmt.test, "pytest", "use_correct"):
            edits.append(
                (stmt.lineno, stmt.end_lineno or stmt.lineno, f"from {name} import {name}\n")
            )
    if len(edits) != 1:
        raise ValueError(f"test_{name}.py has no `if pytest.use_correct:` import of {name}")
    slow: list[object] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _calls_skip(node):
            value = _slow_input(node)
            if value is None:
                raise ValueError(f"test_{name}.py skips a case on a condition ssw cannot read")
            slow.append(value)
    rewritten = _replace(text, edits).replace("pytest.run_slow", "False")
    imports = {
        n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module is not None
    }
    functions = sum(isinstance(n, ast.FunctionDef) and n.name.startswith("test") for n in tree.body)
    return HiddenTest(
        rewritten, "load_testdata" in imports, "node" in imports, tuple(slow), functions
    )


def _kept_cases(data: str, name: str, slow: tuple[object, ...]) -> list[str]:
    lines = [line for line in data.splitlines() if line.strip()]
    kept = []
    for n, line in enumerate(lines, start=1):
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{DATA}/{name}.json line {n} is not JSON ({exc.msg})") from exc
        if not (isinstance(case, list) and len(case) == 2):
            raise ValueError(f"{DATA}/{name}.json line {n} is not [input, expected]")
        if case[0] not in slow:
            kept.append(line)
    if not kept:
        raise ValueError(f"{DATA}/{name}.json has no case QuixBugs runs")
    return kept


def program_files(name: str, sources: dict[str, str], checkout: str) -> dict[str, str]:
    """The task folder's files for program `name`, from `sources` (the files read from the
    checkout, by their path in it); raises ValueError why it cannot be one."""
    before, after = sources[f"{PROGRAMS}/{name}.py"], sources[f"{CORRECT}/{name}.py"]
    check_defines(before, name, "buggy")
    check_defines(after, name, "correct")
    if before == after:
        raise ValueError("the buggy and the correct program are the same")
    test = hidden_test(name, sources[f"{TESTS}/test_{name}.py"])
    fields = {"name": name, "id": name.replace("_", "-"), "source": checkout}
    hidden = {f"tests/test_{name}.py": test.text}
    tests = test.functions
    if test.json_driven:
        if f"{DATA}/{name}.json" not in sources:
            raise ValueError(f"no test data {DATA}/{name}.json")
        cases = _kept_cases(sources[f"{DATA}/{name}.json"], name, test.slow_inputs)
        hidden |= {
            f"tests/{name}.json": "\n".join(cases) + "\n",
            "tests/load_testdata.py": LOAD_TESTDATA,
        }
        tests = len(cases)
    elif test.slow_inputs:
        raise ValueError(f"test_{name}.py skips cases but reads no test data to leave them out of")
    if test.needs_node:
        if f"{TESTS}/node.py" not in sources:
            raise ValueError(f"test_{name}.py imports node, and {TESTS}/node.py is missing")
        hidden["tests/node.py"] = sources[f"{TESTS}/node.py"]
    head = imported_task_head(
        f"QuixBugs program {name!r}, from {checkout} (ssw bench import quixbugs).",
        fields["id"],
        "bugfix",
        INSTRUCTION.format(**fields),
        f"quixbugs-{fields['id']}",
        timeout_s=whole_run_timeout_s(tests),
        task_timeout_s=900,
    )
    return {
        **head,
        f"repo/{name}.py": before,
        f"repo/test_{name}_defined.py": VISIBLE_TEST.format(**fields),
        **hidden,
        "solution/solution.patch": patch_of(before, after, f"{name}.py"),
    }


def _read(tree: SourceFolder, name: str) -> dict[str, str]:
    """The files program `name` may need, by their path in the checkout; missing ones left out."""
    allowance = Allowance()
    wanted = [
        f"{PROGRAMS}/{name}.py",
        f"{CORRECT}/{name}.py",
        f"{TESTS}/test_{name}.py",
        f"{DATA}/{name}.json",
        f"{TESTS}/node.py",
    ]
    found = {}
    for path in wanted:
        if tree.exists(path):
            found[path] = text_of(tree.read(path, allowance, path), path)
    for path in wanted[:3]:
        if path not in found:
            raise ValueError(f"no {path}")
    return found


def import_quixbugs(checkout: Path, out: Path) -> list[Pair]:
    """Every program of `checkout` that QuixBugs tests in Python, as a task under `out`; every
    file read through import_source (no link followed, sizes bounded)."""
    if not (checkout / PROGRAMS).is_dir() or not (checkout / TESTS).is_dir():
        raise UsageError(f"{checkout}: not a QuixBugs checkout (no {PROGRAMS}/ and {TESTS}/)")
    with SourceFolder(checkout) as tree:
        tests = [e.name for e in tree.tree.entries(TESTS)]
        names = sorted(t[5:-3] for t in tests if t.startswith("test_") and t.endswith(".py"))
        if not names:
            raise UsageError(f"{checkout}/{TESTS}: no test_<name>.py files")
        return [
            write_program(out, name, lambda n: program_files(n, _read(tree, n), checkout.name))
            for name in names
        ]
