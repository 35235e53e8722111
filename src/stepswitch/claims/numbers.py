"""Numbers as claims write them: one fixed text per value, so evidence is byte-identical on every
run, and bounds compared exactly (fractions, never a float's rounding)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

Value = int | float | str
Kind = Literal["int", "fixed", "pct", "times", "text"]

_BOUND = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(<=|>=|==|<|>)\s*(-?\d+/\d+|-?\d+(?:\.\d+)?)\s*$")
OPS = ("<", "<=", "==", ">=", ">")


@dataclass(frozen=True)
class Fmt:
    """How a value reads in the README: `fixed` with `places` decimals, `pct` as a percentage of
    1.0, `times` as `8.16x`, `int` with thousands separators, `text` as is."""

    kind: Kind
    places: int = 0

    def render(self, value: Value) -> str:
        if self.kind == "text":
            return str(value)
        if isinstance(value, str):
            raise TypeError(f"a {self.kind} value is a number, not {value!r}")
        if self.kind == "int":
            return f"{int(value):,}"
        if self.kind == "pct":
            return f"{value * 100:.{self.places}f}%"
        if self.kind == "times":
            return f"{value:.{self.places}f}x"
        return f"{value:.{self.places}f}"


INT = Fmt("int")
TEXT = Fmt("text")


def fixed(places: int) -> Fmt:
    return Fmt("fixed", places)


def pct(places: int) -> Fmt:
    return Fmt("pct", places)


def times(places: int) -> Fmt:
    return Fmt("times", places)


def canonical(value: Value) -> str | int:
    """The value as evidence stores it: ints as ints, floats as 12 significant digits (a float's
    repr would do too, but a decimal string says what precision is meant), text as text."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | str):
        return value
    return format(value, ".12g")


@dataclass(frozen=True)
class Bound:
    """`value OP limit`, decided before the evidence: e.g. `ratio <= 1/3`, `missed == 0`."""

    value: str
    op: str
    limit: Fraction
    text: str  # as written, normalized to single spaces

    def holds(self, actual: Value) -> bool:
        if isinstance(actual, str):
            raise TypeError(f"bound {self.text!r} compares a number, not {actual!r}")
        x = Fraction(actual)
        return {
            "<": x < self.limit,
            "<=": x <= self.limit,
            "==": x == self.limit,
            ">=": x >= self.limit,
            ">": x > self.limit,
        }[self.op]


def parse_bound(text: str) -> Bound:
    """A bound; ValueError with the accepted form when it is malformed."""
    found = _BOUND.match(text)
    if found is None:
        raise ValueError(
            f"{text!r} is not VALUE OP NUMBER (OP one of {' '.join(OPS)}; NUMBER like 0, 0.25 or "
            "1/3), e.g. 'ratio <= 1/3'"
        )
    name, op, number = found.groups()
    if number.endswith("/0"):
        raise ValueError(f"{text!r} divides by zero")
    return Bound(name, op, Fraction(number), f"{name} {op} {number}")
