"""The simulated population plays bench tasks only: it must know the task's reference change,
which a user's own repository does not have."""

from __future__ import annotations

from stepswitch.agent.workers import is_simulated
from stepswitch.errors import UsageError
from stepswitch.policy.model import Policy


def refuse_simulated(policy: Policy) -> None:
    """A UsageError for `ssw run` with a worker on provider sim, saying where it does run."""
    if is_simulated(policy):
        raise UsageError(
            "this policy uses the simulated population (provider sim), which plays bench tasks "
            "only (it knows their reference change): run it with `ssw bench run --contestant "
            "POLICY --sim-population FILE`"
        )
