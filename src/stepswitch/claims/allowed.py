"""readme.allow, checked (ADR 0077): an entry blesses one quantity the code fixes, never a
sentence. Each names its `value` and the `source` that holds it (`path/to/module.py:NAME`, a
module-level constant read from the file, not imported); every match of its pattern in a linted
file holds that value and no other number, so an entry cannot bless a figure the code does not
hold, nor one beside it.

    - pattern: 'stops after 600 s'
      why: the foreground call map's time limit
      value: 600
      source: src/stepswitch/gates/callmap_tracer.py:CALL_MAP_TIMEOUT_S

A number followed by `%` in a match is read as its hundredth (`95%` is the value 0.95).
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from stepswitch.claims.model import CLAIMS_FILE, NUMBER, AllowRule
from stepswitch.util.python_ast import parse_python

_OPS: dict[type[ast.operator], Callable[[Fraction, Fraction], Fraction]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


@dataclass(frozen=True)
class Allowed:
    """One entry as the lint uses it: what it blesses, and the value every match must hold."""

    index: int
    pattern: re.Pattern[str]
    value: Fraction | None  # None: the entry names no value (a problem of its own)


def _number(node: ast.expr) -> Fraction | None:
    """A constant's value when it is a number or arithmetic on numbers (`10 * 60`), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return None if isinstance(node.value, bool) else exact(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _number(node.left), _number(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return _OPS[type(node.op)](left, right)
    return None


@functools.lru_cache(maxsize=64)
def _constants(path: Path) -> dict[str, Fraction | None]:
    """Module-level `NAME = ...` and `NAME: T = ...` of a Python file: name -> number or None."""
    tree = parse_python(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, Fraction | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                found[target.id] = _number(value)
    return found


def exact(value: float) -> Fraction:
    """A number as written (0.95 is 19/20, not the float nearest to it)."""
    return Fraction(str(value))


def _shown(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else format(float(value), "g")


def source_problems(root: Path, rules: list[AllowRule]) -> list[str]:
    """Each entry whose source does not hold its value, or that names none."""
    problems = []
    for i, rule in enumerate(rules):
        key = f"{CLAIMS_FILE} readme.allow[{i}] ({rule.pattern!r})"
        if rule.value is None or rule.source is None:
            problems.append(
                f"{key} names no value and source: an entry blesses one quantity the code "
                "fixes (value: N, source: path.py:NAME); a label is a rule of claims/lint.py"
            )
            continue
        rel, _, name = rule.source.rpartition(":")
        path = root / rel
        if not rel.endswith(".py") or not name or not path.is_file():
            problems.append(f"{key}: source {rule.source!r} is not path/to/module.py:NAME")
            continue
        try:
            constants = _constants(path)
        except (SyntaxError, UnicodeDecodeError):
            problems.append(f"{key}: source {rel} is not Python this check can read")
            continue
        held = constants.get(name)
        if name not in constants:
            problems.append(f"{key}: {rel} sets no module-level {name}")
        elif held is None:
            problems.append(f"{key}: {rule.source} is not a number")
        elif held != exact(rule.value):
            problems.append(
                f"{key}: value {_shown(exact(rule.value))} is not what {rule.source} holds "
                f"({_shown(held)}): allow what the code says, or change the text"
            )
    return problems


def allowed(rules: list[AllowRule], patterns: tuple[re.Pattern[str], ...]) -> list[Allowed]:
    return [
        Allowed(i, pattern, None if rule.value is None else exact(rule.value))
        for i, (rule, pattern) in enumerate(zip(rules, patterns, strict=True))
    ]


def _numbers(text: str) -> Iterator[tuple[str, Fraction]]:
    for m in NUMBER.finditer(text):
        written = m.group().rstrip(".,")
        try:
            number = Fraction(written.replace(",", ""))
        except ValueError:
            yield written, Fraction(-1)  # 1.2.3: never a value
            continue
        percent = text[m.end() : m.end() + 1] == "%" or text[m.end() : m.end() + 2] == " %"
        yield written, number / 100 if percent else number


def match_problem(entry: Allowed, matched: str) -> str | None:
    """Why this match is not what the entry may bless: another number, or not its value. An
    entry with no value blesses nothing (source_problems names it)."""
    if entry.value is None:
        return ""
    held = list(_numbers(matched))
    others = [written for written, number in held if number != entry.value]
    if others:
        return (
            f"readme.allow[{entry.index}] blesses only {_shown(entry.value)}, and this match "
            f"also holds {', '.join(repr(o) for o in others)}"
        )
    if not held:
        return f"readme.allow[{entry.index}] blesses {_shown(entry.value)}, which this match lacks"
    return None


__all__ = ["Allowed", "allowed", "match_problem", "source_problems"]
