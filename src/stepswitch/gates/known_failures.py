"""A suite gate that already fails before any edit, judged by the failing tests the change adds:
the pre-flight keeps the ids of the tests its runner's report names as failing on the untouched
start, and after an edit the gate fails only on a test that is not among them (ADR 0072). The
same rule as `gates.findings` for a command gate's findings, by test id instead of by line.

A failing run whose report names no failing test is never a pass: it failed for a reason this
cannot see (the suite did not load, the runner crashed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stepswitch.gates.lang.base import FailedTest


@dataclass(frozen=True)
class KnownFailures:
    """The failing tests a suite gate reported before any edit."""

    gate: str
    start: frozenset[str]  # their ids

    def added(self, failed: Sequence[FailedTest]) -> list[FailedTest] | None:
        """The failing tests the start did not have; None when `failed` names none (then the
        run cannot be judged by them)."""
        if not failed:
            return None
        return [test for test in failed if test.test_id not in self.start]

    def passed_line(self, name: str, count: int) -> str:
        return (
            f"{name}: passed: the {count} failing test(s) it reports failed before any edit "
            "too; the change adds none"
        )

    def added_line(self, head: str, added: int) -> str:
        return (
            f"{head}: the change adds {added} failing test(s) the untouched start did not have "
            f"({len(self.start)} failing before any edit are not counted)"
        )
