"""Turn a registry preset into a provider you can call: codec, base URL and key from the env."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import httpx

from stepswitch.errors import AuthError, UsageError
from stepswitch.registry.presets import ModelSpec, ProviderSpec, get_model
from stepswitch.wire.client import HttpProvider, RetryPolicy
from stepswitch.wire.codec import Codec
from stepswitch.wire.types import Attempt


def codec_for(wire_format: str) -> Codec:
    # Imported on demand: a run pays only for the formats it speaks.
    if wire_format == "chat-completions":
        from stepswitch.wire.formats.chat_completions import ChatCompletionsCodec

        return ChatCompletionsCodec()
    if wire_format == "responses":
        from stepswitch.wire.formats.responses import ResponsesCodec

        return ResponsesCodec()
    if wire_format == "messages":
        from stepswitch.wire.formats.messages import MessagesCodec

        return MessagesCodec()
    if wire_format == "generate-content":
        from stepswitch.wire.formats.generate_content import GenerateContentCodec

        return GenerateContentCodec()
    raise UsageError(
        f"unknown wire format {wire_format!r}; "
        "use chat-completions, responses, messages or generate-content"
    )


def api_key_from_env(spec: ProviderSpec, env: Mapping[str, str] | None = None) -> str | None:
    """The provider's key from its environment variable; None for keyless local servers."""
    if spec.api_key_env is None:
        return None
    key = (os.environ if env is None else env).get(spec.api_key_env, "").strip()
    if not key:
        raise AuthError(
            f"{spec.api_key_env} is not set; export your {spec.display_name} key in it "
            f"(registry/providers/{spec.name}.toml names the variable)"
        )
    return key


def pick_wire_format(spec: ProviderSpec, model: ModelSpec, wanted: str | None) -> str:
    if wanted is None:
        return model.wire_format or spec.default_wire_format
    if wanted not in spec.wire_formats:
        raise UsageError(
            f"provider {spec.name!r} speaks {', '.join(spec.wire_formats)}, not {wanted!r}"
        )
    return wanted


def wire_format_of(spec: ProviderSpec, model_id: str, wire_format: str | None = None) -> str:
    """The wire format a worker of `spec`'s `model_id` speaks (`wire_format`: the policy's)."""
    return pick_wire_format(spec, get_model(spec, model_id), wire_format)


def open_provider(
    spec: ProviderSpec,
    model_id: str,
    *,
    base_url: str | None = None,
    wire_format: str | None = None,
    env: Mapping[str, str] | None = None,
    retry: RetryPolicy | None = None,
    on_attempt: Callable[[Attempt], None] | None = None,
    http: httpx.Client | None = None,
) -> HttpProvider:
    codec = codec_for(wire_format_of(spec, model_id, wire_format))
    return HttpProvider(
        codec,
        base_url or spec.base_url,
        api_key=api_key_from_env(spec, env),
        retry=retry,
        on_attempt=on_attempt,
        http=http,
    )
