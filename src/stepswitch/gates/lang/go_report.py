"""The failing tests of a `go test -json` run: each test whose last event is a "fail", named
with its package (`example.com/shapes/calc.TestAdd`), with the lines it printed (the
`t.Errorf` messages, a panic), and each package that failed without a
failing test (it did not build, its TestMain or init failed, it timed out), with the package's
own lines and the compiler's errors from the run's output. A test whose subtest failed is named
by the subtest only. Without a JSON report, `--- FAIL: Name` lines of plain `go test` output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from stepswitch.gates.lang.base import MESSAGE_CHARS, FailedTest

_FRAMING = re.compile(r"^\s*(?:=== (?:RUN|PAUSE|CONT|NAME)|--- (?:FAIL|PASS|SKIP):)\s")
_SUMMARY = re.compile(r"^(?:FAIL|ok|PASS)\b")
_TEXT_FAIL = re.compile(r"^\s*--- FAIL: (\S+)")
_BUILD_HEADER = re.compile(r"^# (\S+)")
# What go test prints as text, even with -json, for a package it could not build (go 1.19).
_NOT_BUILT = re.compile(r"^FAIL\s+(\S+)\s+\[(\w+ failed)\]")


@dataclass
class _Test:
    failed: bool = False
    lines: list[str] = field(default_factory=list)


def _message(lines: list[str]) -> str:
    kept = [line.rstrip("\n") for line in lines if not _FRAMING.match(line)]
    kept = [line for line in kept if not _SUMMARY.match(line.strip())]
    text = "\n".join(line.strip() for line in kept if line.strip())
    return text[:MESSAGE_CHARS]


def _events(text: str) -> list[dict[str, object]]:
    events = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("Package"), str):
            events.append(event)
    return events


def _build_errors(output: str) -> dict[str, list[str]]:
    """The compiler's lines per package (`# pkg` then its errors), from plain output."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output.splitlines():
        header = _BUILD_HEADER.match(line)
        if header:
            current = found.setdefault(header.group(1), [])
        elif current is not None and line.strip() and not line.startswith("{"):
            current.append(line)
        else:
            current = None
    return found


def json_failures(report: str, output: str) -> list[FailedTest]:
    """The failures in a `go test -json` report; `output` for the compiler's errors."""
    tests: dict[tuple[str, str], _Test] = {}
    packages: dict[str, _Test] = {}
    for event in _events(report):
        package, name = str(event["Package"]), event.get("Test")
        record = (
            tests.setdefault((package, name), _Test())
            if isinstance(name, str)
            else packages.setdefault(package, _Test())
        )
        action = event.get("Action")
        if action == "output" and isinstance(event.get("Output"), str):
            record.lines.append(str(event["Output"]))
        elif action in ("fail", "pass", "skip"):
            record.failed = action == "fail"
    failed_names = {key for key, test in tests.items() if test.failed}
    out: list[FailedTest] = []
    for (package, name), test in tests.items():
        parent_only = any(p == package and n.startswith(name + "/") for p, n in failed_names)
        if test.failed and not parent_only:
            # The package in the id: two packages' TestAdd stay apart.
            out.append(FailedTest(f"{package}.{name}", None, _message(test.lines)))
    not_built = {m.group(1): m.group(2) for m in map(_NOT_BUILT.match, report.splitlines()) if m}
    for package in not_built:
        packages.setdefault(package, _Test()).failed = True
    named = {package for package, _ in failed_names}
    errors = _build_errors(output)
    for package, record in packages.items():
        if record.failed and package not in named:
            why = not_built.get(package, "failed")
            message = _message([*errors.get(package, []), *record.lines])
            out.append(FailedTest(package, None, message or why))
    return out


def text_failures(output: str) -> list[FailedTest]:
    """`--- FAIL: Name` lines of plain `go test` output, each with the lines indented under it."""
    out: list[FailedTest] = []
    lines = output.splitlines()
    for index, line in enumerate(lines):
        found = _TEXT_FAIL.match(line)
        if found is None:
            continue
        depth = len(line) - len(line.lstrip())
        body = []
        for after in lines[index + 1 :]:
            if len(after) - len(after.lstrip()) <= depth or _TEXT_FAIL.match(after):
                break
            body.append(after)
        out.append(FailedTest(found.group(1), None, _message(body)))
    return out


def json_tests_run(report: str) -> int:
    """The tests (subtests included) whose run ended: passed, failed or skipped."""
    ended = {
        (e["Package"], e["Test"])
        for e in _events(report)
        if isinstance(e.get("Test"), str) and e.get("Action") in ("pass", "fail", "skip")
    }
    return len(ended)
