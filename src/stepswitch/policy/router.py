"""The Router: a plain lookup from (step type, escalation level) to a worker, no model calls."""

from __future__ import annotations

from dataclasses import dataclass

from stepswitch.errors import ConfigError
from stepswitch.policy.model import Policy, WorkerConfig, route
from stepswitch.steps import StepType


@dataclass(frozen=True)
class WorkerChoice:
    name: str
    worker: WorkerConfig


class Router:
    """Plain lookup, no model calls: the same step and level always get the same worker."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def pick(self, step_type: StepType, escalations: int) -> WorkerChoice:
        if escalations < 0:
            raise ValueError(f"escalations must be >= 0, not {escalations}")
        name = route(self.policy, step_type, escalations)
        if name is None or name not in self.policy.workers:
            raise ConfigError(
                self.policy.source,
                "rules",
                f"no configured worker for step type {step_type.value!r} "
                f"at escalation level {escalations}",
                "add a rule for it; load the policy with load_policy to catch this early",
            )
        return WorkerChoice(name, self.policy.workers[name])
