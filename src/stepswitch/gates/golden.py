"""Numerical golden checks: a committed file of expected values against the values a command
produces, compared with a relative and an absolute tolerance (|actual - expected| <=
atol + rtol * |expected|, numpy's `isclose`). Numbers are compared within tolerance, other values
exactly; lists by position, objects by key (keys the actual values add are ignored, keys they
lack are failures). The verdict names the worst offender: key, expected, actual, absolute and
relative error. A malformed file is a failing verdict with the reason, never an exception.
The expected values are read from the base commit (GateSuite), never from the worktree, so a
rewritten golden file changes nothing but the verdict of the truth check.

Values are JSON (any nesting) or CSV (a header row, then one row per record; a cell that reads
as a number is a number). A CSV file reads as a list of rows keyed by column: `[2].energy` is the
"energy" cell of the third row.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from stepswitch.gates.runner import GateResult

Format = Literal["json", "csv"]
MAX_PROBLEMS = 8  # structural problems listed in a report
NO_SUCH_FILE = "no such file"  # how GoldenFormatError begins when the file is missing


class GoldenFormatError(ValueError):
    """Values that cannot be read: the message says where and why."""


def _number(cell: str) -> float | str:
    text = cell.strip()
    try:
        return float(text)
    except ValueError:
        return cell


def parse_values(text: str, fmt: Format) -> object:
    """JSON or CSV text as nested lists and dicts; raises GoldenFormatError."""
    if not text.strip():
        raise GoldenFormatError("it is empty")
    if fmt == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise GoldenFormatError(f"not valid JSON: {exc}") from exc
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise GoldenFormatError(f"not valid CSV: {exc}") from exc
    rows = [r for r in rows if r]
    if not rows:
        raise GoldenFormatError("it is empty")
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header) or not all(header):
        raise GoldenFormatError("the CSV header must name every column once")
    out: list[dict[str, float | str]] = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise GoldenFormatError(
                f"CSV line {number} has {len(row)} cells, the header has {len(header)}"
            )
        out.append({h: _number(c) for h, c in zip(header, row, strict=True)})
    if not out:
        raise GoldenFormatError("the CSV has a header but no rows")
    return out


@dataclass(frozen=True)
class Offender:
    key: str
    expected: float
    actual: float
    abs_err: float
    rel_err: float  # inf when expected is 0 and actual is not
    ratio: float  # abs_err / (atol + rtol * |expected|): above 1 is outside the tolerance

    def describe(self) -> str:
        rel = "inf" if math.isinf(self.rel_err) else f"{self.rel_err:.3g}"
        return (
            f"{self.key}: expected {self.expected!r}, actual {self.actual!r} "
            f"(abs error {self.abs_err:.3g}, rel error {rel})"
        )


@dataclass
class Comparison:
    rtol: float
    atol: float
    checked: int = 0  # numbers compared
    outside: int = 0  # numbers outside the tolerance
    problems: list[str] = field(default_factory=list)  # missing keys, types, lengths, values
    worst: Offender | None = None  # the number closest to, or furthest past, the tolerance

    @property
    def passed(self) -> bool:
        return self.outside == 0 and not self.problems

    def summary(self) -> str:
        tol = f"rtol={self.rtol:g} atol={self.atol:g}"
        if self.passed:
            text = f"{self.checked} numbers within {tol}"
            return text + (f"; closest to the limit: {self.worst.describe()}" if self.worst else "")
        parts = []
        if self.outside:
            parts.append(f"{self.outside} of {self.checked} numbers outside {tol}")
        if self.problems:
            parts.append(f"{len(self.problems)} values missing or different")
        lines = ["; ".join(parts)]
        if self.worst is not None and self.outside:
            lines.append(f"worst: {self.worst.describe()}")
        lines += self.problems[:MAX_PROBLEMS]
        if len(self.problems) > MAX_PROBLEMS:
            lines.append(f"... and {len(self.problems) - MAX_PROBLEMS} more")
        return "\n".join(lines)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _join(key: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{key}[{part}]"
    return f"{key}.{part}" if key else part


def _short(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _relative_error(diff: float, expected: float) -> float:
    if diff == 0:
        return 0.0
    return diff / abs(expected) if expected != 0 and math.isfinite(expected) else math.inf


def _compare_numbers(key: str, expected: float, actual: float, out: Comparison) -> None:
    out.checked += 1
    e, a = float(expected), float(actual)
    if math.isnan(e) or math.isnan(a):
        same = math.isnan(e) and math.isnan(a)
        diff = 0.0 if same else math.inf
    elif math.isinf(e) or math.isinf(a):
        diff = 0.0 if e == a else math.inf
    else:
        diff = abs(a - e)
    tol = out.atol + out.rtol * abs(e) if math.isfinite(e) else 0.0
    ratio = diff / tol if tol > 0 else (0.0 if diff == 0 else math.inf)
    rel = _relative_error(diff, e)
    if diff > tol:
        out.outside += 1
    if out.worst is None or ratio > out.worst.ratio:
        out.worst = Offender(key or "(value)", expected, actual, diff, rel, ratio)


def _walk(key: str, expected: object, actual: object, out: Comparison) -> None:
    where = key or "(top level)"
    if _is_number(expected):
        if _is_number(actual):
            _compare_numbers(key, expected, actual, out)  # type: ignore[arg-type]
        else:
            out.checked += 1
            out.problems.append(f"{where}: expected the number {expected}, got {_short(actual)}")
    elif isinstance(expected, dict):
        if not isinstance(actual, dict):
            out.problems.append(f"{where}: expected an object, got {_short(actual)}")
            return
        for name, value in expected.items():
            if name not in actual:
                out.problems.append(f"{_join(key, str(name))}: missing from the actual values")
                continue
            _walk(_join(key, str(name)), value, actual[name], out)
    elif isinstance(expected, list):
        if not isinstance(actual, list):
            out.problems.append(f"{where}: expected a list, got {_short(actual)}")
            return
        if len(actual) != len(expected):
            out.problems.append(f"{where}: expected {len(expected)} items, got {len(actual)}")
        for index, (e, a) in enumerate(zip(expected, actual, strict=False)):
            _walk(_join(key, index), e, a, out)
    elif expected != actual or type(expected) is not type(actual):
        out.problems.append(f"{where}: expected {_short(expected)}, got {_short(actual)}")


def compare(expected: object, actual: object, rtol: float, atol: float) -> Comparison:
    """Compare nested values; never raises."""
    out = Comparison(rtol=rtol, atol=atol)
    _walk("", expected, actual, out)
    return out


def expected_values(data: bytes, fmt: Format) -> object:
    """The expected values in a golden file's bytes; raises GoldenFormatError saying why not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GoldenFormatError(f"cannot read it: {exc}") from exc
    values = parse_values(text, fmt)
    if compare(values, values, 0.0, 0.0).checked == 0:
        raise GoldenFormatError("it holds no numbers to compare")
    return values


def read_expected(path: Path, fmt: Format) -> object:
    """The expected values from a file (outside a repository: `ssw gates` on a plain folder;
    otherwise they come from the base commit); raises GoldenFormatError saying why not."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise GoldenFormatError(NO_SUCH_FILE) from exc
    except OSError as exc:
        raise GoldenFormatError(f"cannot read it: {exc}") from exc
    return expected_values(data, fmt)


def golden_verdict(
    name: str,
    expected_file: str,
    expected: object,
    actual_text: str,
    fmt: Format,
    rtol: float,
    atol: float,
    duration_s: float = 0.0,
    log: str = "",
) -> GateResult:
    """The verdict on a command's output against expected values; never raises."""
    try:
        actual = parse_values(actual_text, fmt)
    except GoldenFormatError as exc:
        excerpt = actual_text.strip()[:300]
        why = f"{name}: failed: the actual values are malformed: {exc}"
        report = why + (f"\nthe output began:\n{excerpt}" if excerpt else "")
        return GateResult(name, False, duration_s, report, f"{log}\n{why}".strip())
    result = compare(expected, actual, rtol, atol)
    verdict = "passed" if result.passed else f"failed against {expected_file}"
    report = f"{name}: {verdict}: {result.summary()}"
    return GateResult(name, result.passed, duration_s, report, f"{log}\n{report}".strip())


def malformed_expected(name: str, expected_file: str, why: str) -> GateResult:
    """The verdict when the expected values cannot be read (`why` from GoldenFormatError)."""
    report = f"{name}: failed: the golden file {expected_file} is malformed: {why}"
    if why.startswith(NO_SUCH_FILE):
        where = why.removeprefix(NO_SUCH_FILE)
        report = f"{name}: failed: the golden file {expected_file} does not exist{where}"
    return GateResult(name, False, 0.0, report, report)
