"""`ssw run --model PROVIDER:MODEL_ID`: a policy built in memory, one worker on every step and
as its own reviewer, one rung (nothing to escalate to). No file is read or written."""

from __future__ import annotations

from collections.abc import Mapping

from stepswitch.errors import UsageError
from stepswitch.policy.model import MODEL_FLAG, Policy, validate_policy
from stepswitch.registry.presets import ProviderSpec

WORKER = "model"
_EXAMPLE = "e.g. --model tokenfactory:openai/gpt-oss-120b"
_MAX_OUTPUT_TOKENS = 16384  # lowered to the model's own cap where the registry names one


def parse_model_flag(value: str, registry: Mapping[str, ProviderSpec]) -> tuple[str, str]:
    """(provider, model id) from PROVIDER:MODEL_ID (the id may hold colons: `ollama:qwen3:8b`);
    a UsageError naming the known providers when the provider is not in the registry. Any model
    id is taken: one the preset does not list needs a price (agent/worker_prices.py)."""
    provider, sep, model_id = value.partition(":")
    if not sep or not provider.strip() or not model_id.strip():
        raise UsageError(f"{MODEL_FLAG} {value!r} is not PROVIDER:MODEL_ID ({_EXAMPLE})")
    if provider not in registry:
        known = ", ".join(sorted(registry))
        raise UsageError(f"{MODEL_FLAG} {value!r}: unknown provider {provider!r}; known: {known}")
    return provider, model_id


def one_model_policy(
    value: str, registry: Mapping[str, ProviderSpec], base_url: str | None = None
) -> Policy:
    """The policy `--model PROVIDER:MODEL_ID` stands for, validated as a file would be; its
    calls go to `base_url` (--base-url) when given, else to the preset's."""
    provider, model_id = parse_model_flag(value, registry)
    spec = registry[provider]
    model = spec.models.get(model_id)
    cap = _MAX_OUTPUT_TOKENS
    if model is not None and model.max_output_tokens is not None:
        cap = min(cap, model.max_output_tokens)
    data = {
        "workers": {
            WORKER: {
                "provider": provider,
                "model": model_id,
                "max_output_tokens": cap,
                "timeout": 600.0 if spec.local else 300.0,
                **({"base_url": base_url} if base_url is not None else {}),
            }
        },
        "rules": [{"worker": WORKER}],
        "escalation": {"ladder": [WORKER]},
        "limits": {"steps_per_rung": 40},  # one rung: it may use every step
        "review": {"reviewer": WORKER},
    }
    return validate_policy(data, f"{MODEL_FLAG} {value}", registry)
