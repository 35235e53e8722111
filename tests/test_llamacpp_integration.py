"""Plumbing against a real OpenAI-compatible server: llama.cpp on Gemma-3-270M (a base model).

The model's words are nonsense, so these tests check only what the wire carries: usage, cache
hits, schema-constrained output, streams, deadlines and ids. One server serves the module; the
probe starts its own, with a smaller window.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import DeadlineExceeded
from stepswitch.registry.presets import ModelSpec, Price, ProviderSpec
from stepswitch.wire.client import HttpProvider, RetryPolicy
from stepswitch.wire.formats.chat_completions import ChatCompletionsCodec
from stepswitch.wire.probe import run_probe
from stepswitch.wire.probe_report import ProbeReport, format_probe_summary, write_probe
from stepswitch.wire.types import Completion, JsonSchemaFormat, Message, Request
from tests.llamacpp_server import running_server

pytest.importorskip("xllamacpp", reason="needs the `llamacpp` extra: pip install xllamacpp")
pytestmark = pytest.mark.slow

MODEL = "gemma-3-270m"
# Bounds, not expectations: a call that works on an idle machine in a second can take many
# times that on a loaded one; only the deadline test below needs a short limit.
CALL_TIMEOUT_S = 180.0
# ~1100 tokens of Gemma-3: long enough that a cache hit cannot be the template alone.
PREFIX = " ".join(f"rule {i}: keep the build green and the tests fast." for i in range(80))


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server() as url:
        yield url


@pytest.fixture(scope="module")
def provider(base_url: str) -> Iterator[HttpProvider]:
    client = HttpProvider(ChatCompletionsCodec(), base_url, retry=RetryPolicy(max_attempts=1))
    yield client
    client.close()


def _ask(
    provider: HttpProvider, *messages: Message, timeout: float = CALL_TIMEOUT_S, **fields: Any
) -> Completion:
    request = Request(model=MODEL, messages=messages, **fields)
    return provider.complete(request, deadline=time.monotonic() + timeout, timeout=timeout)


def test_usage_model_and_request_id_are_reported(provider: HttpProvider) -> None:
    c = _ask(provider, Message("user", "Hello"), max_output_tokens=8)
    assert c.usage is not None
    assert c.usage.prompt_tokens > 0 and 0 < c.usage.completion_tokens <= 8
    assert c.raw_usage["prompt_tokens"] == c.usage.prompt_tokens
    assert c.request_id and c.request_id.startswith("chatcmpl-")  # from the body: no header
    assert c.model.endswith(".gguf")  # llama.cpp names the file it serves


def test_a_repeated_long_prefix_is_served_from_the_cache(provider: HttpProvider) -> None:
    system = Message("system", PREFIX)
    first = _ask(provider, system, Message("user", "First question?"), max_output_tokens=4)
    second = _ask(provider, system, Message("user", "Second question?"), max_output_tokens=4)
    assert first.usage is not None and second.usage is not None
    assert second.usage.prompt_tokens > 1000
    assert second.usage.cached_tokens > max(first.usage.cached_tokens, 1000)
    assert second.raw_usage["prompt_tokens_details"]["cached_tokens"] == second.usage.cached_tokens
    assert second.usage.uncached_prompt_tokens < 50


def test_json_schema_output_parses_and_matches(provider: HttpProvider) -> None:
    # Enums and booleans bound the length: a base model left free writes strings forever.
    schema = {
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "done": {"type": "boolean"},
        },
        "required": ["color", "done"],
        "additionalProperties": False,
    }
    c = _ask(
        provider,
        Message("user", "Pick a color. Answer in JSON."),
        response_format=JsonSchemaFormat("pick", schema),
        max_output_tokens=100,
        temperature=0.0,
    )
    parsed = json.loads(c.message.content)
    assert set(parsed) == {"color", "done"}
    assert parsed["color"] in ("red", "green", "blue") and isinstance(parsed["done"], bool)


def test_streaming_matches_non_streaming_in_shape(provider: HttpProvider) -> None:
    ask = Message("user", "Tell me about the sea.")
    plain = _ask(provider, ask, max_output_tokens=12, temperature=0.0)
    streamed = _ask(provider, ask, max_output_tokens=12, temperature=0.0, stream=True)
    assert streamed.message.content.strip() and plain.message.content.strip()
    assert plain.usage is not None and streamed.usage is not None
    assert streamed.usage.prompt_tokens == plain.usage.prompt_tokens
    assert streamed.usage.completion_tokens > 0
    assert set(streamed.raw_usage) == set(plain.raw_usage)
    assert {k: type(v) for k, v in streamed.raw_usage.items()} == {
        k: type(v) for k, v in plain.raw_usage.items()
    }
    assert streamed.request_id and streamed.model == plain.model


@pytest.mark.parametrize("stream", [False, True])
def test_a_deadline_shorter_than_generation_stops_the_call(
    provider: HttpProvider, stream: bool
) -> None:
    # 3000 tokens take tens of seconds here; the call must give up at its 0.5 s timeout. The
    # error says how: no byte by then (a plain call), or a stream cut off while still arriving;
    # a call read to its end before giving up would say neither.
    stopped = "timed out: ReadTimeout" if not stream else "still arriving|timed out: ReadTimeout"
    with pytest.raises(DeadlineExceeded, match=stopped):
        _ask(
            provider,
            Message("user", "Write a long story."),
            timeout=0.5,
            stream=stream,
            max_output_tokens=3000,
        )


# The probe fills the window it is given (80% of it, then 125%), and reading a long prompt is
# most of its time on one thread: ~24 s of ~42 s at the module server's 4096 tokens (2026-12-01).
# Its own server with a smaller window keeps that window real (the server refuses past it) at
# a fraction of the cost (20.5 s at 1024 tokens, 16.2 s at 512, 2026-12-04); the cache check's
# prefix shrinks to half the window, still most of its prompt.
PROBE_CONTEXT_TOKENS = 512


def test_probe_against_llamacpp(tmp_path: Path) -> None:
    with running_server(context_tokens=PROBE_CONTEXT_TOKENS) as base_url:
        report = _probe(base_url)
    path = write_probe(report, tmp_path)
    print(format_probe_summary(report))
    assert ProbeReport.model_validate_json(path.read_text()) == report
    assert report.calls <= 15
    usage = report.result("usage_fields")
    assert usage.ok is True and "prompt_tokens_details.cached_tokens" in usage.usage_keys
    cache = report.result("prompt_cache")
    assert cache.ok is True and cache.measured["cached_tokens"] > 0
    assert report.result("context_near_limit").ok is True
    assert report.result("context_over_limit").status == 400


def _probe(base_url: str) -> ProbeReport:
    model = ModelSpec(
        family="gemma",
        context_window=PROBE_CONTEXT_TOKENS,
        # Not a reasoning model: listed so the probe's effort path runs against a real server.
        reasoning_efforts=("low",),
        capabilities=("json_schema", "streaming", "prompt_cache"),
        price=Price(input=0, output=0, source="local", as_of=date(2026, 11, 29)),
    )
    spec = ProviderSpec(
        name="llamacpp",
        display_name="llama.cpp",
        base_url=base_url,
        wire_formats=("chat-completions",),
        local=True,
        any_model=True,
        models={MODEL: model},
    )
    return run_probe(spec, MODEL, timeout_s=CALL_TIMEOUT_S, max_output_tokens=32)
