"""Which policy `ssw run` uses, and with which command-line limits: --model's, --policy's, a
recorded script's, or a continued run's as its file had it, with the earlier run's
--max-steps/--budget-usd unless given anew (ADR 0051)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepswitch.agent.worker_prices import check_addresses
from stepswitch.agent.workspace.continued import Continued
from stepswitch.errors import UsageError
from stepswitch.fakes.scripted import Script
from stepswitch.policy.model import Policy, load_policy, validate_policy, with_overrides
from stepswitch.policy.one_model import one_model_policy
from stepswitch.registry.presets import SCRIPTED_PROVIDER, ProviderSpec

if TYPE_CHECKING:
    from stepswitch.cli.run import RunOptions


def run_policy(
    options: RunOptions,
    registry: dict[str, ProviderSpec],
    continued: Continued | None,
    script: Script | None,
) -> Policy:
    """The policy in force, validated with its command-line limits."""
    flags = {"max_steps": options.max_steps, "budget_usd": options.budget_usd}
    if continued is not None and options.policy_path is None and options.model is None:
        # The earlier run's flags, unless given now: today's win.
        flags = {
            k: v if v is not None else continued.record.policy_flags.get(k)
            for k, v in flags.items()
        }
    policy = _chosen(options, registry, continued, script)
    check_addresses(policy, registry)  # before the line naming where keys go
    return with_overrides(policy, **flags)


def _chosen(
    options: RunOptions,
    registry: dict[str, ProviderSpec],
    continued: Continued | None,
    script: Script | None,
) -> Policy:
    if options.model is not None and options.policy_path is not None:
        raise UsageError("give --policy FILE or --model PROVIDER:MODEL_ID, not both")
    if options.base_url is not None and options.model is None:
        raise UsageError(
            "--base-url goes with --model PROVIDER:MODEL_ID (in a policy file, set the "
            "worker's base_url)"
        )
    if options.model is not None:
        return one_model_policy(options.model, registry, options.base_url)
    if options.policy_path is None and continued is not None:
        # As the earlier run loaded it, before its own --max-steps/--budget-usd: its file may
        # have changed since, or be elsewhere. Its flags apply again unless given anew (run_policy).
        record = continued.record
        return validate_policy(
            record.policy_before_flags or record.policy, record.policy_path, registry
        )
    if options.policy_path is None and script is not None and script.policy is not None:
        # A script from --record: the recorded run's policy, every worker on the scripted provider.
        # A script may come from anyone: a worker elsewhere would be sent the user's key.
        replay = validate_policy(script.policy, f"{options.script} (its policy)", registry)
        elsewhere = sorted(
            name
            for name, w in replay.workers.items()
            if w.provider != SCRIPTED_PROVIDER or w.base_url is not None
        )
        if elsewhere:
            raise UsageError(
                f"--script {options.script}: its policy puts {', '.join(elsewhere)} on a real "
                "provider or address; a replay policy may have only workers on the scripted "
                "provider (pass --policy FILE to choose the workers yourself)"
            )
        return replay
    if options.policy_path is None:
        raise UsageError(
            "give --policy FILE or --model PROVIDER:MODEL_ID "
            "(`ssw init PROVIDER` writes a starter policy)"
        )
    return load_policy(options.policy_path)
