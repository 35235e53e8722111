"""Each completion names the model the provider says served it, read from the response, and
`same_model` tells a dated or prefixed variant of the model asked for from another model."""

from __future__ import annotations

import time

import pytest

from stepswitch.fakes.loopback import LoopbackServer, Reply
from stepswitch.wire.client import HttpProvider
from stepswitch.wire.open import codec_for
from stepswitch.wire.served import same_model
from stepswitch.wire.types import Message, Request
from tests.wire.test_four_formats_over_http import CASES, SSE, _body

SERVED = {
    "chat-completions": "nvidia/nemotron-3-super-120b-a12b",
    "responses": "gpt-5-mini-2025-08-07",
    "messages": "claude-haiku-4-5-20251001",
    "generate-content": "gemini-3.1-pro-preview",
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire_format", sorted(CASES))
def test_the_completion_names_the_model_the_response_names_not_the_one_asked(
    wire_format: str, stream: bool
):
    plain, streamed, _, _ = CASES[wire_format]
    reply = Reply(body=_body(streamed), headers=SSE) if stream else Reply(body=_body(plain))
    request = Request(model="asked-model", messages=(Message("user", "go"),), stream=stream)
    with LoopbackServer(lambda _: reply) as server:
        client = HttpProvider(codec_for(wire_format), server.base_url)
        completion = client.complete(request, deadline=time.monotonic() + 30)
    assert completion.model == SERVED[wire_format]


@pytest.mark.parametrize(
    ("requested", "served"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929"),
        ("claude-sonnet-4-5", "claude-sonnet-4-5@20250929"),  # Vertex
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022"),
        ("openai/gpt-4.1", "gpt-4.1"),  # OpenRouter asked with its prefix
        ("gpt-4.1", "openai/gpt-4.1"),
        ("gpt-4.1", "gpt-4.1-2025-04-14"),
        ("gpt-5-mini", "gpt-5-mini-2025-08-07"),
        ("gpt-4", "gpt-4-0613"),
        ("gemini-2.5-flash", "models/gemini-2.5-flash"),
        ("gemini-2.0-flash", "gemini-2.0-flash-001"),
        ("deepseek/deepseek-r1:free", "deepseek-r1"),
        ("Claude-Opus-5", "claude-opus-5"),
        ("any-model", ""),  # the provider named none: nothing to flag
    ],
)
def test_dated_and_prefixed_variants_are_the_same_model(requested: str, served: str):
    assert same_model(requested, served)


@pytest.mark.parametrize(
    ("requested", "served"),
    [
        ("gpt-4.1", "gpt-4.1-mini"),
        ("gpt-4.1", "gpt-4o-2024-08-06"),
        ("claude-sonnet-4", "claude-sonnet-4-5-20250929"),  # a minor version is not a date
        ("claude-opus-5", "claude-sonnet-5"),
        ("openai/gpt-5", "meta-llama/llama-3.3-70b-instruct"),  # a gateway's default model
        ("gemini-2.5-pro", "gemini-2.5-flash"),
        ("qwen3-coder", "qwen3-coder-plus"),
    ],
)
def test_a_really_different_model_is_flagged(requested: str, served: str):
    assert not same_model(requested, served)
