"""Every parse of Python in ssw goes through util/python_ast.py, one thread at a time: CPython
3.11 shares the AST conversion's recursion depth between threads, and the bench's validation
parses tasks on a pool (a CI run met "AST constructor recursion depth mismatch")."""

from __future__ import annotations

import ast
from pathlib import Path

from stepswitch.util import python_ast

SRC = Path(__file__).resolve().parents[2] / "src" / "stepswitch"


def test_no_module_of_ssw_parses_python_but_through_the_one_lock() -> None:
    direct = []
    for path in SRC.rglob("*.py"):
        if path.name == "python_ast.py":
            continue
        for node in ast.walk(python_ast.parse_python(path.read_bytes(), str(path))):
            called = node.func if isinstance(node, ast.Call) else None
            if (
                isinstance(called, ast.Attribute)
                and called.attr == "parse"
                and isinstance(called.value, ast.Name)
                and called.value.id == "ast"
            ):
                direct.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert direct == []
