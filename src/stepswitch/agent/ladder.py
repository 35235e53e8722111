"""The escalation ladder: which rung holds the task, how many steps and gate failures it has
used, and when the next rung takes over. One object owns that state and decides."""

from __future__ import annotations

from stepswitch.errors import RunStopped
from stepswitch.policy.model import Policy


class RungExhausted(Exception):
    """The rung in charge used its steps: the machine escalates (control flow, not an error)."""


class Ladder:
    def __init__(self, policy: Policy, start: int = 0) -> None:
        self.rungs = policy.escalation.ladder
        self.after_gate_failures = policy.escalation.after_gate_failures
        self.steps_per_rung = policy.limits.steps_per_rung
        self.level = start  # above 0 only when tier memory says so (agent/tier_memory.py)
        self.steps_on_rung = 0
        self.gate_failures_on_rung = 0

    @property
    def worker(self) -> str:
        return self.rungs[self.level]

    def take_step(self) -> None:
        """Count one model call on the rung in charge; raises RungExhausted when none is left."""
        if self.steps_on_rung >= self.steps_per_rung:
            raise RungExhausted(
                f"rung {self.level} ({self.worker}) used its {self.steps_per_rung} steps"
            )
        self.steps_on_rung += 1

    def gates_failed(self) -> str | None:
        """Count a gate failure; the reason to escalate when the rung has had its tries."""
        self.gate_failures_on_rung += 1
        if self.gate_failures_on_rung < self.after_gate_failures:
            return None
        return f"the gates failed {self.gate_failures_on_rung} times on rung {self.level}"

    def climb(self, reason: str, outcome_at_top: str) -> int:
        """The next rung takes over; past the last rung the run stops with `outcome_at_top`."""
        if self.level + 1 >= len(self.rungs):
            raise RunStopped(outcome_at_top, f"{reason}, and no rung is left to take over")
        self.level += 1
        self.steps_on_rung = 0
        self.gate_failures_on_rung = 0
        return self.level
