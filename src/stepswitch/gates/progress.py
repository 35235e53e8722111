"""One gate run as it goes: the verdicts so far, their saved logs, the tests gate's stages.

The model sees a short report (failing test ids, the `>` and `E` lines, the first lines of a lint
error, at most REPORT_CHARS); the whole log, capped at LOG_CAP_CHARS, is saved in the run folder.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from stepswitch.gates.report import cap_log, fit_lines
from stepswitch.gates.runner import REPORT_CHARS, GateResult


@dataclass(frozen=True)
class TestStage:
    """One pytest run of the tests gate: which files it ran and how it ended."""

    __test__ = False  # not a pytest test class

    name: str  # "tests:covered", "tests:impacted-named", "tests:impacted", ..., "tests:full"
    files: int | None  # test files selected; None: the whole suite
    duration_s: float
    passed: bool
    first_failure: str | None = None  # the first FAILED/ERROR test id
    tests: int | None = None  # tests selected in those files; None: every test they hold
    warm: bool = False  # forked from the warm pytest (gates.warm), not a fresh one
    why: str = ""  # a suite gate's: what its runner selected and why, or why the full suite ran
    ran: int | None = None  # tests pytest ran, from the session record; None: no record


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


def keep(result: GateResult, log_dir: Path | None) -> tuple[GateResult, Path | None]:
    """`result` with its report cut to REPORT_CHARS and its log capped; the log saved in
    `log_dir` (when given) under the next number."""
    log = cap_log(result.log)
    report = result.report
    if len(report) > REPORT_CHARS:
        report = fit_lines(report.splitlines(), REPORT_CHARS)
    path = None
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        number = sum(1 for _ in log_dir.iterdir()) + 1
        path = log_dir / f"{number:03d}-{_safe_name(result.name)}.log"
        path.write_text(log, encoding="utf-8")
    return replace(result, report=report, log=log), path


@dataclass
class SuiteProgress:
    """The verdicts of one gate run so far (kept as `keep` has them, logs saved in `log_dir`),
    and what the tests gate measured on the way."""

    started: float
    log_dir: Path | None
    results: list[GateResult] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    impacted: tuple[str, ...] = ()
    impacted_s: float | None = None
    full_s: float | None = None
    first_verdict_s: float | None = None
    full_ran: bool = False
    first_failure_s: float | None = None
    test_stages: list[TestStage] = field(default_factory=list)
    warm_notes: list[str] = field(default_factory=list)
    skipped: tuple[str, ...] = ()  # the full stage's skipped or xfailed test ids, when it passed

    @property
    def stopped(self) -> bool:
        """Whether the last verdict failed: the gates after it do not run."""
        return bool(self.results) and not self.results[-1].passed

    def record(self, result: GateResult) -> None:
        kept, path = keep(result, self.log_dir)
        self.results.append(kept)
        if path is not None:
            self.logs.append(path)

    def full_stage(self, run: Callable[[], object]) -> None:
        """Run the tests gate's full suite (`run`), timing it as `full_s`."""
        began = time.monotonic()
        run()
        self.full_s = time.monotonic() - began
        self.full_ran = True

    def stage_finished(self, stage: TestStage, result: GateResult) -> None:
        """A test stage's line and verdict kept; the first failing one's time noted."""
        self.test_stages.append(stage)
        if not result.passed and self.first_failure_s is None:
            self.first_failure_s = time.monotonic() - self.started
        self.record(result)

    def test_stage_done(self, began: float) -> float:
        now = time.monotonic()
        if self.first_verdict_s is None:
            self.first_verdict_s = now - self.started
        return now - began
