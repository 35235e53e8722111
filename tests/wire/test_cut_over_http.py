"""A reply cut at the output cap, in every wire format over real HTTP on 127.0.0.1, is a cut
reply to the step (ADR 0062: `cut_at_output_cap`, its tool calls never run), not prose; the same
body with its format's normal ending is not (the control)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from stepswitch.agent.step_facts import output_failure
from stepswitch.fakes.loopback import LoopbackServer, Reply
from stepswitch.wire.client import HttpProvider, RetryPolicy
from stepswitch.wire.open import codec_for
from stepswitch.wire.types import Completion, FinishReason, Message, Request

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _fixture(name: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / name).read_text())
    body.pop("_source", None)
    return dict(body)


def _chat(cut: bool) -> dict[str, Any]:
    body = _fixture("chat_completions/tool_calls_parallel.json")
    body["choices"][0]["finish_reason"] = "length" if cut else "tool_calls"
    return body


def _responses(cut: bool) -> dict[str, Any]:
    body = _fixture("responses/two_tool_calls.json")
    if cut:
        body |= {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    return body


def _messages(cut: bool) -> dict[str, Any]:
    return _fixture("messages/two_tool_uses.json") | {
        "stop_reason": "max_tokens" if cut else "tool_use"
    }


def _generate_content(cut: bool) -> dict[str, Any]:
    body = _fixture("generate_content/two_function_calls.json")
    body["candidates"][0]["finishReason"] = "MAX_TOKENS" if cut else "STOP"
    return body


BODIES = {
    "chat-completions": _chat,
    "responses": _responses,
    "messages": _messages,
    "generate-content": _generate_content,
}


def _complete(wire_format: str, body: dict[str, Any]) -> Completion:
    request = Request(model="m", messages=(Message("user", "go"),), max_output_tokens=300)
    with LoopbackServer(lambda _: Reply(body=body)) as server:
        client = HttpProvider(codec_for(wire_format), server.base_url, retry=RetryPolicy(1))
        try:
            return client.complete(request, deadline=time.monotonic() + 30)
        finally:
            client.close()


@pytest.mark.parametrize("wire_format", sorted(BODIES))
def test_a_reply_cut_at_the_cap_is_a_cut_reply_in_every_format(wire_format: str) -> None:
    completion = _complete(wire_format, BODIES[wire_format](cut=True))
    assert completion.message.tool_calls  # the cut reply still carries (maybe cut) tool calls
    assert completion.finish_reason is FinishReason.LENGTH
    assert output_failure(completion) == "cut_at_output_cap"


@pytest.mark.parametrize("wire_format", sorted(BODIES))
def test_the_same_reply_ended_normally_is_no_failure(wire_format: str) -> None:
    completion = _complete(wire_format, BODIES[wire_format](cut=False))
    assert completion.finish_reason is FinishReason.TOOL_CALLS
    assert output_failure(completion) is None
