"""The first lines `ssw run` prints, before the pre-flight: where it works, the branch it will
make, the policy, each worker's model and the rungs, and the budget (issue 43)."""

from __future__ import annotations

from pathlib import Path

from stepswitch.agent.workers import is_scripted, is_simulated
from stepswitch.cli.render import no_model_label
from stepswitch.policy.model import Policy


def budget_text(budget_usd: float | None) -> str:
    return (
        "no dollar budget (--budget-usd sets one)" if budget_usd is None else f"${budget_usd:.2f}"
    )


def header_lines(repo: Path, branch: str, policy: Policy) -> list[str]:
    workers = ", ".join(f"{name} {w.provider}:{w.model}" for name, w in policy.workers.items())
    rungs = " > ".join(policy.escalation.ladder)
    label = no_model_label(is_scripted(policy), is_simulated(policy))
    return [
        f"ssw run: {repo} -> new branch {branch}{label}",
        f"  policy: {policy.source}; budget: {budget_text(policy.limits.budget_usd)}",
        f"  workers: {workers}; rungs: {rungs}",
    ]
