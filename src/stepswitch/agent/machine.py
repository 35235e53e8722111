"""The step machine. Control flow lives here, in code:

plan -> navigate -> read -> run -> edit -> GATES -> (triage -> edit -> GATES)* -> review ->
summarize

After `after_gate_failures` failures on one rung (or a rung out of steps), the next rung of the
ladder takes the task over with the failure reports; past the last rung the run stops.
A rejecting review sends the task back to edit once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stepswitch.agent.phase import PhaseResult, review_change, run_phase
from stepswitch.agent.prompts import TaskBrief
from stepswitch.agent.session import Session
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.errors import RunStopped
from stepswitch.gates.suite import SuiteResult
from stepswitch.policy.model import StepType
from stepswitch.records import GateRecord, ReviewRecord

GateRunner = Callable[[list[str]], SuiteResult]  # changed paths -> the gates' verdicts
DiffReader = Callable[[], tuple[str, list[str]]]  # -> (diff text, changed paths)


@dataclass
class MachineResult:
    commit_message: str
    gate_failures: int = 0
    model_output_failures: int = 0


class StepMachine:
    def __init__(
        self,
        session: Session,
        ws: Workspace,
        brief: TaskBrief,
        run_gates: GateRunner,
        read_diff: DiffReader,
    ) -> None:
        self.session = session
        self.ws = ws
        self.brief = brief
        self.run_gates = run_gates
        self.read_diff = read_diff
        self.result = MachineResult(commit_message="")

    def _phase(self, step_type: StepType) -> PhaseResult:
        outcome = run_phase(self.session, self.ws, step_type, self.brief)
        self.result.model_output_failures += outcome.model_output_failures
        if outcome.failure and outcome.failure.startswith("rung_steps"):
            self.session.escalate(outcome.failure.removeprefix("rung_steps: "))
            return run_phase(self.session, self.ws, step_type, self.brief)
        return outcome

    def _summary(self, outcome: PhaseResult) -> str:
        if outcome.finished:
            return outcome.summary
        return f"({outcome.step_type.value} step ended without a summary: {outcome.failure})"

    def run(self) -> MachineResult:
        b = self.brief
        b.plan = self._summary(self._phase(StepType.PLAN))
        b.files = self._summary(self._phase(StepType.NAVIGATE))
        b.notes = self._summary(self._phase(StepType.READ))
        b.observed = self._summary(self._phase(StepType.RUN))
        sent_back = False
        while True:
            self._phase(StepType.EDIT)
            b.diff, b.changed = self.read_diff()
            if not self._gates_pass():
                b.diagnosis = self._summary(self._phase(StepType.TRIAGE))
                continue
            verdict, reasons = self._review()
            if verdict == "reject" and not sent_back:
                sent_back = True
                b.review_feedback = reasons
                continue
            break
        summary = self._phase(StepType.SUMMARIZE)
        subject = b.task.strip().splitlines()[0][:60] if b.task.strip() else "change"
        self.result.commit_message = (
            summary.summary if summary.finished else f"ssw: {subject}\n\n{summary.failure}"
        )
        return self.result

    def _gates_pass(self) -> bool:
        suite = self.run_gates(self.brief.changed)
        passed = suite.passed
        s = self.session
        failing = suite.failed
        record = s.record_event(
            "gates",
            gate=[
                GateRecord(name=v.name, passed=v.passed, duration_s=v.duration_s, report=v.report)
                for v in suite.results
            ],
            gate_timings=suite.timings(),
            note="passed" if passed else f"failed: {failing.name if failing else '?'}",
        )
        first = suite.first_verdict_s
        when = f" (first test verdict {first:.1f} s)" if first is not None else ""
        s.print_line(f"    gates     {record.note}: {', '.join(suite.stages) or 'none'}{when}")
        if passed:
            self.brief.gate_report = ""
            return True
        self.result.gate_failures += 1
        s.gate_failures_on_rung += 1
        self.brief.gate_report = suite.report
        limit = s.policy.escalation.after_gate_failures
        if s.gate_failures_on_rung >= limit:
            s.escalate(f"the gates failed {limit} times on rung {s.level}")
        return False

    def _review(self) -> tuple[str, str]:
        review = self.session.policy.review
        verdict, reasons = review_change(
            self.session, self.brief, review.reviewer if review else None
        )
        record = ReviewRecord(verdict=verdict, reasons=reasons)
        if review and review.second_opinion:
            second, second_reasons = review_change(self.session, self.brief, review.second_opinion)
            record.second_opinion = second  # type: ignore[assignment]
            record.second_reasons = second_reasons
            record.agree = second == verdict
            if not record.agree:
                self.session.print_line(
                    f"    review    reviewer says {verdict}, second opinion says {second}"
                )
        self.session.record_event("review_verdicts", review=record)
        return verdict, reasons


__all__ = ["MachineResult", "RunStopped", "StepMachine"]
