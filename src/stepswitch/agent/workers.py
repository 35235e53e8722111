"""Before any call: every worker's model is in the registry, priced (unless the policy allows
unpriced models), and its provider's key is set."""

from __future__ import annotations

from collections.abc import Mapping

from stepswitch.errors import ConfigError
from stepswitch.policy.model import Policy
from stepswitch.registry.presets import SCRIPTED_PROVIDER, ModelSpec, ProviderSpec, get_model
from stepswitch.wire.open import api_key_from_env


def worker_models(policy: Policy, registry: Mapping[str, ProviderSpec]) -> dict[str, ModelSpec]:
    """Worker name -> its model's registry entry; a ConfigError naming the worker otherwise."""
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
                f"run `ssw prices refresh {worker.provider}` or set [ledger] allow_unpriced",
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
