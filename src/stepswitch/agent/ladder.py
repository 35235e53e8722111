"""The escalation ladder: which rung holds the task, how many of its own steps and gate failures
it has used, how often the gates failed or the reviewer rejected its change, and when the next
rung takes over. One object owns that state and decides
(docs/decisions/0050-escalation-by-the-rungs-own-steps.md)."""

from __future__ import annotations

from typing import Literal

from stepswitch.errors import RunStopped, StopOutcome
from stepswitch.policy.model import Policy
from stepswitch.steps import StepType

# The steps a rung is in charge of: what it edits, runs and triages. Planning, exploring,
# summarizing and reviewing go to other workers by the policy's rules and never use its steps.
RUNG_STEPS = frozenset({StepType.EDIT, StepType.RUN, StepType.TRIAGE})

EscalationRule = Literal["gate_failures", "rung_steps", "no_change", "review_rejections"]


class RungExhausted(Exception):
    """The rung in charge used its steps: the machine escalates (control flow, not an error)."""

    rule: EscalationRule = "rung_steps"


class Ladder:
    def __init__(self, policy: Policy, start: int = 0) -> None:
        self.rungs = policy.escalation.ladder
        self.after_gate_failures = policy.escalation.after_gate_failures
        self.after_review_rejections = policy.escalation.after_review_rejections
        self.steps_per_rung = policy.limits.steps_per_rung
        self.level = start  # above 0 only when tier memory says so (agent/tier_memory.py)
        self.steps_on_rung = 0
        self.gate_failures_on_rung = 0
        self.empty_edits_on_rung = 0
        self.rejections_on_rung = 0

    @property
    def worker(self) -> str:
        return self.rungs[self.level]

    def counts(self, step_type: StepType, routed_to: str) -> bool:
        """Whether a call is the rung's own: one of its steps, routed to its worker."""
        return step_type in RUNG_STEPS and routed_to == self.worker

    def take_step(self) -> None:
        """Count one of the rung's own calls; raises RungExhausted when none is left."""
        if self.steps_on_rung >= self.steps_per_rung:
            raise RungExhausted(
                f"rung {self.level} ({self.worker}) used its {self.steps_per_rung} steps "
                "(edit, run and triage calls on it)"
            )
        self.steps_on_rung += 1

    def gates_failed(self) -> str | None:
        """Count a gate failure; the reason to escalate when the rung has had its tries."""
        self.gate_failures_on_rung += 1
        if self.gate_failures_on_rung < self.after_gate_failures:
            return None
        return f"the gates failed {self.gate_failures_on_rung} times on rung {self.level}"

    def changed_nothing(self) -> str | None:
        """Count an edit step that left the tree as it was; the reason to escalate when the
        rung has had as many tries as it gets for failing gates."""
        self.empty_edits_on_rung += 1
        if self.empty_edits_on_rung < self.after_gate_failures:
            return None
        tries = self.empty_edits_on_rung
        return f"the edit step changed no file {tries} times on rung {self.level}"

    def review_rejected(self) -> str | None:
        """Count a review that rejected the rung's change; the reason to escalate when the
        rung has had its tries (the policy's `after_review_rejections`)."""
        self.rejections_on_rung += 1
        if self.rejections_on_rung < self.after_review_rejections:
            return None
        times = self.rejections_on_rung
        return f"the reviewer rejected the change {times} times on rung {self.level}"

    def climb(self, reason: str, outcome_at_top: StopOutcome) -> int:
        """The next rung takes over; past the last rung the run stops with `outcome_at_top`."""
        if self.level + 1 >= len(self.rungs):
            raise RunStopped(outcome_at_top, f"{reason}, and no rung is left to take over")
        self.level += 1
        self.steps_on_rung = 0
        self.gate_failures_on_rung = 0
        self.empty_edits_on_rung = 0
        self.rejections_on_rung = 0
        return self.level
