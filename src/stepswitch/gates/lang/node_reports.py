"""The failing tests in a Node runner's report: node's own `--test` through Stepswitch's reporter
(`node_reporter.mjs`: one JSON object a line), Jest's and Vitest's `--json` report (the same
shape), Mocha's `json` reporter. Each gives `FailedTest`s with the file as the runner names it
(absolute; `relative_failures` makes it the repository's) and the assertion's first lines; an
unreadable or missing report gives none, and the gate's output says what failed instead."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from stepswitch.gates.lang.base import MESSAGE_CHARS, FailedTest
from stepswitch.util.text_files import text_or_empty

# A stack frame line ("    at f (file:3:4)"): the message stops before the stack.
_FRAME = re.compile(r"^\s+at\s")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def message_of(text: str) -> str:
    """An assertion's message without its stack trace or colours, at most MESSAGE_CHARS."""
    lines: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        if _FRAME.match(line):
            break
        lines.append(line.rstrip())
    return "\n".join(lines).strip()[:MESSAGE_CHARS]


def _load_json(report: Path) -> Any:
    try:
        return json.loads(report.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def _json_lines(report: Path) -> list[dict[str, Any]]:
    text = text_or_empty(report)
    events: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


# -- node --test (node_reporter.mjs) ------------------------------------------------------------


def node_test_failures(report: Path) -> list[FailedTest]:
    """Failing tests (not the suites around them) from the reporter's lines: `{"event": "fail",
    "path": ["suite", "test"], "file": ..., "message": ...}`."""
    out: list[FailedTest] = []
    for event in _json_lines(report):
        if event.get("event") != "fail" or event.get("suite"):
            continue
        names = [str(n) for n in event.get("path") or [event.get("name", "?")]]
        file = event.get("file") if isinstance(event.get("file"), str) else None
        # A file that fails as a whole is named after itself: its id is the file alone.
        test_id = " > ".join([file, *names] if file and names != [file] else names)
        out.append(FailedTest(test_id, file, message_of(str(event.get("message") or ""))))
    return out


def node_test_count(report: Path) -> int | None:
    events = _json_lines(report)
    if not events:
        return None
    return sum(1 for e in events if e.get("event") in ("pass", "fail") and not e.get("suite"))


# -- Jest and Vitest (--json) -------------------------------------------------------------------


def _objects(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The JSON objects in the list `data[key]` (anything else there passed over)."""
    found = data.get(key)
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def jest_failures(report: Path) -> list[FailedTest]:
    """Jest's `--json` report (Vitest's json reporter writes the same shape): each failing
    assertion, and each test file that failed to run at all."""
    data = _load_json(report)
    if not isinstance(data, dict):
        return []
    out: list[FailedTest] = []
    for suite in _objects(data, "testResults"):
        file = _text(suite, "name")
        failed = [
            a
            for a in suite.get("assertionResults") or []
            if isinstance(a, dict) and a.get("status") == "failed"
        ]
        for assertion in failed:
            names = [*(assertion.get("ancestorTitles") or []), assertion.get("title", "?")]
            test_id = " > ".join(str(n) for n in ([file] if file else []) + names)
            messages = assertion.get("failureMessages") or []
            out.append(FailedTest(test_id, file, message_of(str(messages[0]) if messages else "")))
        if not failed and suite.get("status") == "failed":  # the file did not load or run
            message = message_of(str(suite.get("message") or "the test file failed to run"))
            out.append(FailedTest(file or "?", file, message))
    return out


def jest_count(report: Path) -> int | None:
    data = _load_json(report)
    total = data.get("numTotalTests") if isinstance(data, dict) else None
    return total if isinstance(total, int) else None


# -- Mocha (json reporter) ----------------------------------------------------------------------


def mocha_failures(report: Path, output: str) -> list[FailedTest]:
    """Mocha's `json` report, from the file or, when mocha wrote it to its output, from there."""
    data = _load_json(report)
    if not isinstance(data, dict):
        start = output.find("{")
        try:
            data = json.loads(output[start:]) if start >= 0 else None
        except ValueError:
            data = None
    if not isinstance(data, dict):
        return []
    out: list[FailedTest] = []
    for failure in _objects(data, "failures"):
        file = _text(failure, "file")
        title = str(failure.get("fullTitle") or failure.get("title") or "?")
        err = failure.get("err")
        err = err if isinstance(err, dict) else {}
        message = str(err.get("message") or err.get("stack") or "")
        out.append(FailedTest(f"{file} > {title}" if file else title, file, message_of(message)))
    return out


def mocha_count(report: Path) -> int | None:
    data = _load_json(report)
    stats = data.get("stats") if isinstance(data, dict) else None
    tests = stats.get("tests") if isinstance(stats, dict) else None
    return tests if isinstance(tests, int) else None
