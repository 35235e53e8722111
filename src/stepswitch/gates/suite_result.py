"""One run of a repository's gates, as its verdict: the gates in the order they ran, what was
skipped or not run, the test stages and their timings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stepswitch.gates.progress import TestStage
from stepswitch.gates.runner import GateResult


@dataclass(frozen=True)
class SuiteResult:
    results: tuple[GateResult, ...]  # in the order they ran; the last one failed, if any did
    skipped: tuple[str, ...] = ()  # gates whose globs matched no changed file
    not_run: tuple[str, ...] = ()  # gates after the first failure
    impacted: tuple[str, ...] = ()  # the test files the impacted stage ran
    impacted_s: float | None = None  # None: no impacted stage
    full_s: float | None = None  # None: the full suite did not run
    first_verdict_s: float | None = None  # suite start to the end of the first test stage
    full_ran: bool = False
    total_s: float = 0.0
    logs: tuple[Path, ...] = ()
    test_stages: tuple[TestStage, ...] = ()
    first_failure_s: float | None = None  # suite start to the end of the failing test stage
    interpreter: str = ""  # the Python the gates ran with, and why
    warm_notes: tuple[str, ...] = ()  # test stages the warm pytest could not run, and why

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.results)

    @property
    def failed(self) -> GateResult | None:
        return next((r for r in self.results if not r.passed), None)

    @property
    def report(self) -> str:
        """What the model sees: the failing gates' short reports."""
        return "\n\n".join(r.report for r in self.results if not r.passed)

    def timings(self) -> dict[str, float | bool | None]:
        return {
            "first_verdict_s": self.first_verdict_s,
            "impacted_s": self.impacted_s,
            "full_s": self.full_s,
            "full_ran": self.full_ran,
            "first_failure_s": self.first_failure_s,
            "total_s": self.total_s,
        }
