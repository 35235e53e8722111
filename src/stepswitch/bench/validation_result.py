"""What validating a task found: the checks by name, in the order they run, each check's
outcome, and the task's verdict (`validate.validate_task` makes it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from stepswitch.bench.verdict import TestVerdict
from stepswitch.util.text import first_line

# The checks, in the order they run; each names what must hold.
CHECKS: dict[str, str] = {
    "start_fails_hidden": "the untouched start fails its hidden tests",
    "start_visible": "the start passes its own visible tests",
    "reference_applies": "the reference applies to the start",
    "reference_hidden_1": "the reference passes the hidden tests",
    "reference_hidden_2": "the reference passes the hidden tests again, the same tests",
    "reference_visible": "the reference passes its own visible tests",
    "needs_hidden": "the test command does not pass without the hidden tests",
    "reference_gates": "the reference passes the task's gates other than tests",
    "test_data_declared": "the files of repo/ the hidden tests name are declared test data "
    "(a warning, never a failure)",
}


@dataclass(frozen=True)
class Check:
    name: str  # a key of CHECKS
    ok: bool
    found: str  # what it found, e.g. "1 failed: tests/test_x.py::test_y", "no gates"
    warning: bool = False  # ok, but `found` says what the task's author should look at


@dataclass(frozen=True)
class TaskValidation:
    task: str  # suite/id
    problem: str | None  # None: the task is valid
    start: TestVerdict | None = None  # the hidden tests on the untouched start
    reference: tuple[TestVerdict, ...] = ()  # the hidden tests on the reference, each run
    duration_s: float = 0.0
    checks: tuple[Check, ...] = ()  # in the order run; after the first problem none runs
    # `problem` says this machine lacks a command the tests run (task.toml `requires_tools`):
    # the task was not judged here, neither valid nor invalid.
    unjudged: bool = False

    @property
    def valid(self) -> bool:
        return self.problem is None

    @property
    def invalid(self) -> bool:
        """Judged, and found invalid (a task not judged here is neither)."""
        return self.problem is not None and not self.unjudged

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(c.found for c in self.checks if c.warning)


class Invalid(Exception):
    """The reason a task is invalid (internal: validate_task returns it as data)."""


class Unjudged(Invalid):
    """The reason a task cannot be judged on this machine: a command its tests run is missing."""


def why_of(verdict: TestVerdict) -> str:
    shown = verdict.summary()
    if verdict.failing:
        shown += ": " + ", ".join(verdict.failing[:3])
    elif not verdict.report and verdict.output:
        shown += ": " + first_line(verdict.output[-400:])
    return shown


@dataclass
class Found:
    """What validate_task found so far: the verdicts it keeps and each check in order."""

    start: TestVerdict | None = None
    reference: list[TestVerdict] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def ok(self, name: str, found: str) -> None:
        self.checks.append(Check(name, True, found))

    def fail(self, name: str, problem: str) -> Invalid:
        self.checks.append(Check(name, False, problem))
        return Invalid(problem)
