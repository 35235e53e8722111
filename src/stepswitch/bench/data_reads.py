"""The files of a task's start that its hidden tests name (`undeclared_data_reads`), read from
the tests' source: what `ssw bench validate` warns about when `[tests] data` leaves them out."""

from __future__ import annotations

import ast
import posixpath
from pathlib import Path

from stepswitch.bench.grading_layout import is_test_file
from stepswitch.bench.task import Task
from stepswitch.bench.task_data import covers
from stepswitch.util.python_ast import parse_python

PATH_CALLS = ("join", "Path", "PurePath", "PosixPath")  # calls whose arguments spell a path


def _pieces(node: ast.AST) -> list[ast.expr] | None:
    """The operands of `a / "b" / "c"` or the arguments of `join(a, "b")`, `Path(a, "b")`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        pieces: list[ast.expr] = []
        at: ast.expr = node
        while isinstance(at, ast.BinOp) and isinstance(at.op, ast.Div):
            pieces.insert(0, at.right)
            at = at.left
        return [at, *pieces]
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return list(node.args) if name in PATH_CALLS else None
    return None


def _children(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    return list(node.args) if isinstance(node, ast.Call) else []


def _spelt(node: ast.AST) -> str | None:
    """The path a node spells out: a string, or the strings ending a chain or a join, joined
    with "/"."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    tail: list[str] = []
    for piece in reversed(_pieces(node) or []):
        if not (isinstance(piece, ast.Constant) and isinstance(piece.value, str)):
            break
        tail.insert(0, piece.value)
    return "/".join(tail) if tail else None


def _named_paths(source: str) -> set[str]:
    """Every path the source spells out, relative (a leading "/", "./" or "../" taken off); a
    piece of a chain or a join counts only with the whole of it ("expected" in
    `ROOT / "expected" / "out.json"` names no folder)."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return set()
    inner = {id(child) for node in ast.walk(tree) if _pieces(node) for child in _children(node)}
    named = set()
    for node in ast.walk(tree):
        text = None if id(node) in inner else _spelt(node)
        if text and "\n" not in text:
            path = posixpath.normpath(text)
            while path.startswith(("../", "/")):
                path = path.removeprefix("../").lstrip("/")
            if path not in ("", ".", ".."):
                named.add(path)
    return named


def undeclared_data_reads(task: Task) -> dict[str, list[str]]:
    """The files of the start that a hidden test's source names (a string literal, a `/` chain
    or a join of literals naming the file or its folder) and `[tests] data` does not declare,
    by hidden test file; code and test files are left out (reading the change's code is the
    point of a test). Static, so a path built at run time is not seen."""
    files = [
        rel
        for rel in sorted(p.relative_to(task.repo).as_posix() for p in task.repo.rglob("*"))
        if (task.repo / rel).is_file() and not rel.endswith(".py") and not is_test_file(Path(rel))
    ]
    found: dict[str, list[str]] = {}
    for test in sorted(task.hidden_tests.rglob("*.py")):
        named = _named_paths(test.read_text(encoding="utf-8", errors="replace"))
        reads = [
            rel
            for rel in files
            if any(rel == n or rel.startswith(n + "/") for n in named)
            and not covers(task.spec.tests.data, rel)
        ]
        if reads:
            found[test.relative_to(task.hidden_tests).as_posix()] = reads
    return found
