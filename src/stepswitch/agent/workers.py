"""Before any call: every worker's model is in the registry, priced (unless the policy allows
unpriced models), and its provider's key is set."""

from __future__ import annotations

import os
from collections.abc import Mapping

from stepswitch.errors import ConfigError
from stepswitch.policy.model import Policy
from stepswitch.registry.first_use import key_in
from stepswitch.registry.presets import (
    SCRIPTED_PROVIDER,
    SIM_PROVIDER,
    ModelSpec,
    ProviderSpec,
    get_model,
)
from stepswitch.wire.open import api_key_from_env


def unpriced_fix(spec: ProviderSpec, env: Mapping[str, str] | None = None) -> str:
    """The one thing to do about a model of `spec` with no known price."""
    if spec.prices_endpoint and spec.api_key_env and not key_in(spec, env or os.environ):
        return (
            f"export {spec.api_key_env}=<your {spec.display_name} key>: ssw then reads the "
            "price from the provider's model list when it runs"
        )
    if spec.prices_endpoint:
        return (
            f"the provider's model list gives no price for it (`ssw prices refresh {spec.name}` "
            f"reads it again); write one in registry/providers/{spec.name}.toml or set "
            "[ledger] allow_unpriced"
        )
    return (
        f"write its price in registry/providers/{spec.name}.toml from the provider's pricing "
        "page (see registry/README.md), or set [ledger] allow_unpriced"
    )


def worker_models(
    policy: Policy, registry: Mapping[str, ProviderSpec], env: Mapping[str, str] | None = None
) -> dict[str, ModelSpec]:
    """Worker name -> its model's registry entry; a ConfigError naming the worker otherwise.
    `env` is where the provider keys are looked for, for the fix of an unpriced model."""
    models: dict[str, ModelSpec] = {}
    for name, worker in policy.workers.items():
        if worker.provider not in registry:
            raise ConfigError(
                policy.source,
                f"workers.{name}.provider",
                f"unknown provider {worker.provider!r}",
                "run `ssw models`",
            )
        model = get_model(registry[worker.provider], worker.model)
        if not model.priced and not policy.ledger.allow_unpriced:
            raise ConfigError(
                policy.source,
                f"workers.{name}",
                f"{worker.provider} {worker.model} has no known price",
                unpriced_fix(registry[worker.provider], env),
            )
        models[name] = model
    return models


def check_keys(
    policy: Policy, registry: Mapping[str, ProviderSpec], env: Mapping[str, str] | None = None
) -> None:
    """An AuthError naming the variable when a worker's provider key is not set."""
    for worker in policy.workers.values():
        api_key_from_env(registry[worker.provider], env)


def is_scripted(policy: Policy) -> bool:
    return any(w.provider == SCRIPTED_PROVIDER for w in policy.workers.values())


def is_simulated(policy: Policy) -> bool:
    """A worker on the simulated population: no model is called, as with a script (ADR 0053)."""
    return any(w.provider == SIM_PROVIDER for w in policy.workers.values())
