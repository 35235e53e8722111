"""The step machine. Control flow lives here, in code:

plan -> navigate -> read -> run -> edit -> GATES -> (triage -> edit -> GATES)* -> review ->
summarize

After `after_gate_failures` failures on one rung, as many edit steps that changed nothing, or
when a rung runs out of its own steps (its edit, run and triage calls), the next rung of the
ladder takes the task over with every failure report so far; past the last rung the run stops
(`gates_failed`, `no_change` or `limit`). An empty change is never gated, reviewed or `done`. A
rejecting review sends the task back to edit with the reviewer's reasons; after
`after_review_rejections` rejections on one rung the next rung takes over, and past the last the
run ends `rejected` (ADR 0054): a rejected change is never `done`. A review that gives no
verdict never approves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from stepswitch.agent.ladder import EscalationRule, RungExhausted
from stepswitch.agent.phase import PhaseResult, review_change, run_phase
from stepswitch.agent.prompts import TaskBrief
from stepswitch.agent.session import Session
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.errors import RunStopped, StopOutcome
from stepswitch.gates.suite_result import SuiteResult
from stepswitch.records.run import GatesVerdict, ReviewVerdict
from stepswitch.records.steps import (
    Escalation,
    GateRecord,
    GateVerdicts,
    ReviewRecord,
    ReviewVerdicts,
)
from stepswitch.steps import StepType

DiffReader = Callable[[], tuple[str, list[str]]]  # -> (diff text, changed paths)
EARLIER_REPORTS_KEPT = 6  # failing gate reports older than the latest that the editor still sees


class GateRunner(Protocol):
    """The project's gates for one workspace; knows nothing of models."""

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def description(self) -> str: ...  # one line for the run's start: which gates, from where

    def before_edit(self) -> None:
        """An edit step begins, so a gate run follows: RepoGates starts its warm pytest now."""

    def run(self, changed: list[str]) -> SuiteResult: ...


class ReviewWithheld(RunStopped):
    """The gates passed but no reviewer gave a verdict: the change is committed unreviewed."""

    def __init__(self, message: str) -> None:
        super().__init__("error", message)


@dataclass
class MachineResult:
    commit_message: str = ""
    gates_verdict: GatesVerdict = "not_run"
    review_verdict: ReviewVerdict | None = None


@dataclass(eq=False)
class StepMachine:
    session: Session
    ws: Workspace
    brief: TaskBrief
    gates: GateRunner
    read_diff: DiffReader
    result: MachineResult = field(default_factory=MachineResult, init=False)

    def _escalate(self, reason: str, outcome_at_top: StopOutcome, rule: EscalationRule) -> None:
        s = self.session
        level = s.ladder.climb(reason, outcome_at_top)
        s.events.emit(
            Escalation(to_level=level, to_worker=s.ladder.worker, reason=reason, rule=rule)
        )

    def _phase(self, step_type: StepType) -> PhaseResult:
        while True:
            try:
                return run_phase(self.session, self.ws, step_type, self.brief)
            except RungExhausted as exc:
                # The last rung out of steps is a limit, not a gate failure.
                self._escalate(str(exc), "limit", exc.rule)

    def _summary(self, outcome: PhaseResult) -> str:
        if outcome.finished:
            return outcome.summary
        return f"({outcome.step_type.value} step ended without a summary: {outcome.failure})"

    def run(self) -> MachineResult:
        b = self.brief
        # A continued run's brief holds what the earlier run's steps answered: not asked again.
        b.plan = b.plan or self._summary(self._phase(StepType.PLAN))
        b.files = b.files or self._summary(self._phase(StepType.NAVIGATE))
        b.notes = b.notes or self._summary(self._phase(StepType.READ))
        b.observed = b.observed or self._summary(self._phase(StepType.RUN))
        while True:
            self.gates.before_edit()
            self._phase(StepType.EDIT)
            b.diff, b.changed = self.read_diff()
            if not b.changed:
                self._changed_nothing()
                continue
            if not self._gates_pass():
                b.diagnosis = self._summary(self._phase(StepType.TRIAGE))
                continue
            verdict, reasons = self._review()
            if verdict == "reject":
                b.review_feedback = reasons
                reason = self.session.ladder.review_rejected()
                if reason is not None:
                    self._escalate(reason, "rejected", "review_rejections")
                continue
            break
        summary = self._phase(StepType.SUMMARIZE)
        subject = b.task.strip().splitlines()[0][:60] if b.task.strip() else "change"
        self.result.commit_message = (
            summary.summary if summary.finished else f"ssw: {subject}\n\n{summary.failure}"
        )
        if self.result.review_verdict == "unparsed":
            raise ReviewWithheld(
                "the gates passed, but the reviewer gave no verdict it could be read from; "
                "the change is committed unreviewed"
            )
        return self.result

    def _gates_pass(self) -> bool:
        s = self.session
        if not self.gates.names:
            self.result.gates_verdict = "none"
            return True
        s.events.progress("gates", "gates " + ", ".join(self.gates.names))
        suite = self.gates.run(self.brief.changed)
        failing = suite.failed
        s.events.emit(
            GateVerdicts(
                passed=suite.passed,
                failed_gate=failing.name if failing else None,
                gates=[
                    GateRecord(
                        name=v.name, passed=v.passed, duration_s=v.duration_s, report=v.report
                    )
                    for v in suite.results
                ],
                timings=suite.timings(),
            )
        )
        if suite.passed:
            self.result.gates_verdict = "passed"
            return True
        self.result.gates_verdict = "failed"
        b = self.brief
        if b.gate_report:
            b.earlier_gate_reports = [*b.earlier_gate_reports, b.gate_report][
                -EARLIER_REPORTS_KEPT:
            ]
        b.gate_report = suite.report
        reason = s.ladder.gates_failed()
        if reason is not None:
            self._escalate(reason, "gates_failed", "gate_failures")
        return False

    def _changed_nothing(self) -> None:
        """The edit step left the tree as the base commit has it: nothing to gate or review.
        The editor is told so; the rung's tries for it are its tries for failing gates."""
        s, b = self.session, self.brief
        s.events.notice(f"the edit step changed no file (rung {s.ladder.level})")
        if b.gate_report:
            b.earlier_gate_reports = [*b.earlier_gate_reports, b.gate_report][
                -EARLIER_REPORTS_KEPT:
            ]
        b.gate_report = (
            "Your edit step changed no file: the tree is exactly as the task found it (an edit "
            "whose old text did not match is refused and changes nothing). Make the change "
            "with `edit` (exact old text, as `read` shows it) or `write_file`."
        )
        reason = s.ladder.changed_nothing()
        if reason is not None:
            self._escalate(reason, "no_change", "no_change")

    def _review(self) -> tuple[ReviewVerdict, str]:
        s = self.session
        review = s.policy.review
        verdict, reasons = review_change(s, self.brief, review.reviewer if review else None)
        record = ReviewRecord(verdict=verdict, reasons=reasons)
        if review and review.second_opinion:
            second, second_reasons = review_change(s, self.brief, review.second_opinion)
            record = record.model_copy(
                update={
                    "second_opinion": second,
                    "second_reasons": second_reasons,
                    "agree": second == verdict,
                }
            )
        self.result.review_verdict = verdict
        s.events.emit(ReviewVerdicts(review=record))
        return verdict, reasons
