"""`ast.parse` for every caller in ssw, one at a time in the process.

CPython 3.11 keeps the recursion depth of the AST's conversion to Python objects in the `ast`
module's state, shared by every thread: two threads parsing at once (the bench's validation runs
tasks on a pool, and each task's checks read its Python with `ast`) can leave it off by the
other's depth, and a parse then raises "SystemError: AST constructor recursion depth mismatch"
(CPython issues 106905 and 95185). A CI run of `ssw bench validate` met it. A lock around the
parse costs nothing measurable: a parse holds the GIL almost throughout anyway."""

from __future__ import annotations

import ast
import threading

_PARSING = threading.Lock()


def parse_python(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, never beside another thread's."""
    with _PARSING:
        return ast.parse(source, filename=filename)
