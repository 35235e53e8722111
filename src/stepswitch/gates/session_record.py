"""What pytest itself saw in a test stage, against the status it exited with.

The `ssw_select` plugin writes the stage's session record (`session.json` in the stage's folder:
the exit status pytest will return, the tests run, the failed tests, the errors) once the
session has ended. A stage that exits 0 is a pass only if that record agrees: a pytest that
exited 0 without writing it ended before its session did (a test module or the code it imports
calling `os._exit(0)`), and one whose record counts failures had its status changed after its
tests ran (a `pytest_sessionfinish` setting `session.exitstatus`). Both are failing verdicts
naming the cause. Code that runs inside pytest's process can still change what pytest reports
about each test; that is the in-process limit of ADR 0021.

The record is required only where the stage is one pytest ssw starts itself (the tests command
is `<python> -m pytest ...`, warm or fresh): a command of the repository's own (a script, tox)
may start pytest any number of times, or none.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from stepswitch.gates.runner import GateResult

SESSION_FILE = "session.json"
RECORD_CAP_BYTES = 4096
PYTEST_NO_TESTS = 5  # pytest's exit status when it collected nothing


def _read(path: Path) -> dict[str, int] | None:
    try:
        if path.is_symlink() or path.stat().st_size > RECORD_CAP_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    keys = ("exitstatus", "tests", "failed", "errors")
    if not all(isinstance(data.get(k), int) for k in keys):
        return None
    return {k: int(data[k]) for k in keys}


def tests_ran(record: Path) -> int | None:
    """How many tests the stage's pytest ran, by its session record; None without one."""
    seen = _read(record)
    return None if seen is None else seen["tests"]


def _failed(result: GateResult, why: str) -> GateResult:
    report = f"{result.name}: failed: {why}"
    return replace(result, passed=False, report=report, log=f"[ssw: {why}]\n{result.log}")


def judged_by_session(result: GateResult, record: Path, required: bool) -> GateResult:
    """`result` (a test stage's command verdict) as its session record allows it: a pass that
    the record does not back is a failing verdict saying why."""
    if not result.passed:
        return result
    seen = _read(record)
    if seen is None:
        if not required:
            return result
        return _failed(
            result,
            "pytest exited 0 but ended before its session did (no end-of-session record): "
            "something the tests import ended it early, e.g. os._exit(0)",
        )
    bad = seen["failed"] + seen["errors"]
    if bad or seen["exitstatus"] not in (0, PYTEST_NO_TESTS):
        return _failed(
            result,
            f"pytest exited 0 but its session ended with status {seen['exitstatus']}, "
            f"{seen['failed']} failed and {seen['errors']} errors: the exit status was changed "
            "after the tests ran",
        )
    return result
