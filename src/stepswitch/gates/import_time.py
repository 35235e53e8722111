"""Which lines of a Python file run when the module is imported, not when one of its functions
is called: module-level statements (assignments, comprehensions, calls), class bodies, and the
headers of functions defined at import (decorators, default values, annotations, docstrings).

The call map records the lines each test ran, so a line that ran at import (during collection,
before any test, or inside whichever test first imported a module) is charged to no test or to
the wrong one: the map cannot say which tests such a change affects (ADR 0076), and the import
graph decides instead (`CallMap.covering`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from stepswitch.util.python_ast import parse_python

Spans = tuple[tuple[int, int], ...]  # (first line, last line), both included, in order


def import_time_spans(source: bytes) -> Spans:
    """The lines of `source` that run at import, as spans. A file this Python cannot parse (newer
    syntax, a syntax error) is import-time throughout: nothing in it is placed by a trace."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        count = source.count(b"\n") + 1
        return ((1, count),)
    text = source.decode("utf-8", errors="replace").splitlines()
    lines: set[int] = set()
    for node in tree.body:
        lines.update(range(_first_line(node), (node.end_lineno or node.lineno) + 1))
    for function in _defined_at_import(tree):
        lines.difference_update(_body_lines(function, text))
    return _spans(sorted(lines))


def _first_line(node: ast.stmt) -> int:
    """A decorated definition starts at its first decorator."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _defined_at_import(node: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions whose `def` runs at import: at module level, in class bodies, under `if`,
    `try`, `with` and loops; not those inside another function (its body runs on a call)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
        else:
            yield from _defined_at_import(child)


def _body_lines(function: ast.FunctionDef | ast.AsyncFunctionDef, text: list[str]) -> set[int]:
    """The lines only a call of `function` runs: from the end of its header (or of its docstring)
    to its last line, comments included; a line the header shares (a one-line `def`) is not."""
    body = function.body
    start = _header_end(function, text) + 1
    if ast.get_docstring(function, clean=False) is not None:
        if len(body) == 1:
            return set()  # nothing but a docstring: all of it is set at import
        start = max(start, (body[0].end_lineno or body[0].lineno) + 1)
    return set(range(start, (function.end_lineno or function.lineno) + 1))


def _header_end(function: ast.FunctionDef | ast.AsyncFunctionDef, text: list[str]) -> int:
    """The last line of the `def` statement's header, up to its colon: the signature's last
    element, then the lines of code (`):`, `) -> int:`) before the body's first line."""
    parts: list[ast.AST] = [*function.args.args, *function.args.posonlyargs]
    parts += [*function.args.kwonlyargs, *function.args.defaults]
    parts += [d for d in function.args.kw_defaults if d is not None]
    parts += [a for a in (function.args.vararg, function.args.kwarg, function.returns) if a]
    last = max([function.lineno, *(getattr(p, "end_lineno", None) or 0 for p in parts)])
    first_body = function.body[0].lineno
    while last + 1 < first_body and last < len(text):
        following = text[last].strip()  # the line after `last` (text is 0-based)
        if not following or following.startswith("#"):
            break
        last += 1
    return last


def _spans(lines: list[int]) -> Spans:
    out: list[tuple[int, int]] = []
    for line in lines:
        if out and out[-1][1] == line - 1:
            out[-1] = (out[-1][0], line)
        else:
            out.append((line, line))
    return tuple(out)


def in_spans(spans: Spans, line: int) -> bool:
    return any(first <= line <= last for first, last in spans)
