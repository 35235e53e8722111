"""What pytest said about one graded run (`TestVerdict`), read from its exit status and its JUnit
XML report (`parse_junit`): a report that is not one document pytest would write, agreeing with
the exit status, is a verdict of tampering (docs/decisions/0015-grading.md)."""

from __future__ import annotations

import signal
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from stepswitch.bench.grading_timeout import TIMEOUT_MARK

REPORT_CAP_BYTES = 20_000_000


@dataclass(frozen=True)
class TestVerdict:
    """What pytest said about one run: its exit status and its JUnit report's counts."""

    __test__ = False  # not a pytest test class

    exit_status: int | None  # None: it could not start, or was killed at the whole-run limit
    report: bool  # a JUnit report was written and read
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    timed_out: str | None = None  # why, when a test or the run passed its limit
    failing: tuple[str, ...] = ()  # the first failed or errored test ids
    duration_s: float = 0.0
    output: str = ""  # the tail of standard output and error
    tampered: str | None = None  # why what came out of the report's pipe is not pytest's report
    sandbox: str = "none"  # what confined the run (util/sandbox.py)

    @property
    def passed_tests(self) -> int:
        return self.tests - self.failures - self.errors - self.skipped

    @property
    def passed(self) -> bool:
        """Every hidden test ran and passed: none failed, errored or skipped, none timed out,
        and the report is pytest's own."""
        clean = self.failures == self.errors == self.skipped == 0 and not self.timed_out
        honest = self.tampered is None
        return self.exit_status == 0 and self.report and self.tests > 0 and clean and honest

    @property
    def failed(self) -> bool:
        """The runner ran and reported a failing or erroring test (a collection error counts),
        or the tree's code tampered with the report."""
        bad = self.failures + self.errors > 0 or self.tampered is not None
        return self.report and bad and not self.timed_out

    def summary(self) -> str:
        if self.timed_out:
            return f"timed out: {self.timed_out}"
        if self.tampered:
            return f"report tampered with: {self.tampered}"
        if not self.report:
            status = "not started" if self.exit_status is None else f"exit {self.exit_status}"
            return f"no JUnit report ({status})"
        parts = [
            f"{n} {word}"
            for n, word in (
                (self.failures, "failed"),
                (self.errors, "error" if self.errors == 1 else "errors"),
                (self.passed_tests, "passed"),
                (self.skipped, "skipped"),
            )
            if n
        ]
        return ", ".join(parts) or "no tests"

    @property
    def sandbox_refused(self) -> str | None:
        """The sandbox's own complaint (its first line) when it did not start the command."""
        first = next((line.strip() for line in self.output.splitlines() if line.strip()), "")
        refused = not self.report and self.exit_status not in (None, 0)
        return first if refused and first.startswith(SANDBOX_VOICES) else None

    def tree_fault(self) -> str | None:
        """Why there is no verdict when the graded tree is to blame, or None: there is a report,
        or ssw is to blame (the command or the sandbox did not start). The rule (ADR 0015): the
        limits are the task's, which validate ran its reference within, and pytest started with
        ssw's options in a sandbox that came up always reports unless something in its process,
        the graded code, ends it first."""
        if self.report:
            return None
        if self.timed_out:
            return f"timed out: {self.timed_out}"
        if self.exit_status is None or self.sandbox_refused is not None:
            return None
        status = self.exit_status
        ended = f"killed by {_signal_name(-status)}" if status < 0 else f"exit {status}"
        return f"the hidden tests gave no report: the graded code ended pytest first ({ended})"


# What the sandbox's tools (util/sandbox_backends.py; `ssw-sandbox` is unshare's script) print
# first when they cannot start the command: before it runs, so not something the graded code
# printed.
SANDBOX_VOICES = (
    "bwrap:",
    "unshare:",
    "setpriv:",
    "mount:",
    "umount:",
    "pivot_root:",
    "ssw-sandbox:",
)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def parse_junit(data: bytes, exit_status: int, duration_s: float, output: str) -> TestVerdict:
    """The counts of pytest's JUnit XML report. Nothing written is `report=False` (pytest did
    not get that far). Anything else must be what pytest writes, one `<testsuites>` document
    with one `<testsuite>`, agreeing with the exit status; if not, the tree's code wrote into the
    report (or stopped pytest from writing it whole) and the verdict is `tampered`."""

    def tampered(why: str) -> TestVerdict:
        return TestVerdict(exit_status, True, tampered=why, duration_s=duration_s, output=output)

    if not data.strip():
        return TestVerdict(exit_status, False, duration_s=duration_s, output=output)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return tampered(f"not one XML document ({exc})")
    suites = list(root.iter("testsuite"))
    if root.tag != "testsuites" or len(suites) != 1 or list(root) != suites:
        return tampered("not the shape pytest writes (one <testsuite> in <testsuites>)")
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    try:
        for key in counts:
            counts[key] = int(suites[0].get(key, "0") or 0)
    except ValueError:
        return tampered("a count that is not a number")
    if exit_status == 0 and counts["failures"] + counts["errors"] > 0:
        return tampered("pytest exited 0 but the report lists failures")
    failing: list[str] = []
    timed_out = None
    for case in root.iter("testcase"):
        for bad in (*case.findall("failure"), *case.findall("error")):
            name = f"{case.get('classname', '')}::{case.get('name', '')}".strip(":")
            failing.append(name)
            message = bad.get("message", "")
            if TIMEOUT_MARK in message:
                timed_out = f"{name}: {message.removeprefix('Failed: ')}"
    return TestVerdict(
        exit_status,
        True,
        tests=counts["tests"],
        failures=counts["failures"],
        errors=counts["errors"],
        skipped=counts["skipped"],
        timed_out=timed_out,
        failing=tuple(dict.fromkeys(failing))[:10],
        duration_s=duration_s,
        output=output,
    )
