"""Two turns of a tool loop over real HTTP on 127.0.0.1, plain and streamed, for each format
that carries reasoning state: turn 1's recorded response carries the state, and the body of
turn 2 sends it back exactly as the provider's reference asks, to the same model only."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stepswitch.fakes.loopback import LoopbackServer, Reply, ReplyQueue
from stepswitch.wire.client import HttpProvider
from stepswitch.wire.formats.generate_content import SIGNATURE_PLACEHOLDER
from stepswitch.wire.open import codec_for
from stepswitch.wire.types import Completion, Message, Request, ToolSpec

FIXTURES = Path(__file__).parent.parent / "fixtures"
SSE = {"Content-Type": "text/event-stream"}
EPHEMERAL = {"type": "ephemeral"}
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {}}})
# Long enough to pass the smallest cacheable prefix, as the agent's static system prompt does.
SYSTEM = "You are a careful coding agent. " + "Keep every change small and tested. " * 120
ASK = "Fix the failing test in tests/test_dates.py."


@dataclass(frozen=True)
class Loop:
    model: str
    other_model: str  # what an escalation would switch to
    turn1: tuple[str, str]  # plain, streamed
    turn2: tuple[str, str]


LOOPS = {
    "messages": Loop(
        "claude-sonnet-5",
        "claude-opus-5",
        ("messages/tool_loop_turn1_thinking.json", "messages/stream_tool_loop_turn1_thinking.sse"),
        ("messages/tool_loop_turn2_answer.json", "messages/stream_thinking_and_text.sse"),
    ),
    "responses": Loop(
        "gpt-5-mini",
        "gpt-5",
        (
            "responses/tool_loop_turn1_encrypted.json",
            "responses/stream_tool_loop_turn1_encrypted.sse",
        ),
        ("responses/text_with_reasoning.json", "responses/stream_text_with_reasoning.sse"),
    ),
    "generate-content": Loop(
        "gemini-3.1-pro-preview",
        "gemini-3-flash-preview",
        (
            "generate_content/two_function_calls.json",
            "generate_content/stream_two_function_calls.sse",
        ),
        ("generate_content/thought_and_text.json", "generate_content/stream_thought_and_text.sse"),
    ),
}


def _reply(name: str) -> Reply:
    text = (FIXTURES / name).read_text()
    if name.endswith(".sse"):
        return Reply(body=text, headers=SSE)
    data = json.loads(text)
    data.pop("_source")
    return Reply(body=data)


def _recorded(name: str) -> Any:
    data = json.loads((FIXTURES / name).read_text())
    data.pop("_source")
    return data


def _results(completion: Completion) -> tuple[Message, ...]:
    return tuple(
        Message("tool", f"result of {call.name}", tool_call_id=call.id, name=call.name)
        for call in completion.message.tool_calls
    )


def run_loop(
    wire_format: str, stream: bool, *, second_model: str | None = None, **fields: Any
) -> tuple[list[dict[str, Any]], Completion]:
    """Two calls of one tool loop; the second appends turn 1's message as the agent does."""
    loop = LOOPS[wire_format]
    index = 1 if stream else 0
    replies = ReplyQueue([_reply(loop.turn1[index]), _reply(loop.turn2[index])])
    asked = (Message("system", SYSTEM), Message("user", ASK))
    common: dict[str, Any] = {"tools": (READ,), "reasoning_effort": "high", "stream": stream}
    common |= fields
    with LoopbackServer(replies) as server:
        client = HttpProvider(codec_for(wire_format), server.base_url, api_key="k-1")
        first = client.complete(
            Request(loop.model, asked, **common), deadline=time.monotonic() + 30
        )
        messages = (*asked, first.message, *_results(first))
        client.complete(
            Request(second_model or loop.model, messages, **common),
            deadline=time.monotonic() + 30,
        )
        bodies = [r.json() for r in server.requests]
    return bodies, first


STREAM = pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])


@STREAM
def test_messages_sends_the_signed_thinking_back_with_cache_breakpoints(stream: bool):
    bodies, first = run_loop("messages", stream)
    recorded = _recorded("messages/tool_loop_turn1_thinking.json")["content"]
    assert first.message.reasoning_state is not None
    one, two = bodies
    marked_system = [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]
    # Turn 1: the system prompt and the end of the request are breakpoints.
    assert one["system"] == marked_system
    assert one["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": ASK, "cache_control": EPHEMERAL}]}
    ]
    assert one["thinking"] == {"type": "adaptive", "display": "summarized"}
    # Turn 2: the assistant turn goes back as received, thinking block and signature first;
    # thinking stays on inside the loop; the end of turn 1 and of turn 2 are breakpoints.
    assert two["system"] == marked_system
    assert two["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": ASK, "cache_control": EPHEMERAL}]},
        {"role": "assistant", "content": recorded},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01LoopRead9x",
                    "content": "result of read_file",
                    "cache_control": EPHEMERAL,
                }
            ],
        },
    ]
    assert two["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert "cache_control" not in two["tools"][-1]  # the tools alone are under the minimum
    assert json.dumps(two).count('"cache_control"') <= 4


@STREAM
def test_responses_sends_the_encrypted_reasoning_item_back_before_its_call(stream: bool):
    bodies, first = run_loop("responses", stream)
    reasoning, call = _recorded("responses/tool_loop_turn1_encrypted.json")["output"]
    assert first.message.reasoning_state is not None
    one, two = bodies
    assert one["include"] == two["include"] == ["reasoning.encrypted_content"]
    assert one["store"] is two["store"] is False
    assert two["instructions"] == SYSTEM
    assert two["input"] == [
        {"type": "message", "role": "user", "content": ASK},
        reasoning,
        {
            "type": "function_call",
            "call_id": call["call_id"],
            "name": "read_file",
            "arguments": call["arguments"],
        },
        {
            "type": "function_call_output",
            "call_id": "call_loop_read",
            "output": "result of read_file",
        },
    ]


@STREAM
def test_generate_content_sends_the_real_thought_signature_on_its_call(stream: bool):
    bodies, first = run_loop("generate-content", stream)
    parts = _recorded("generate_content/two_function_calls.json")["candidates"][0]["content"]
    assert first.message.reasoning_state is not None
    two = bodies[1]
    assert two["contents"] == [
        {"role": "user", "parts": [{"text": ASK}]},
        {"role": "model", "parts": parts["parts"]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "read_file",
                        "response": {"result": "result of read_file"},
                    }
                },
                {"functionResponse": {"name": "grep", "response": {"result": "result of grep"}}},
            ],
        },
    ]
    assert SIGNATURE_PLACEHOLDER not in json.dumps(two)


OPAQUE = {
    "messages": "ErUBCkYIBhgCIkCsig-turn-one-opaque-QmFzZTY0U2lnbmF0dXJl",
    "responses": "gAAAAABpLoopOneOpaqueEncryptedReasoning0123456789abcdefXYZ==",
    "generate-content": "CiQBcsjafB7Mz0k1c3Zk2yqR",
}


@STREAM
@pytest.mark.parametrize("wire_format", sorted(LOOPS))
def test_state_is_dropped_when_the_next_call_goes_to_another_model(wire_format: str, stream: bool):
    loop = LOOPS[wire_format]
    bodies, first = run_loop(wire_format, stream, second_model=loop.other_model)
    assert OPAQUE[wire_format] in json.dumps(first.message.reasoning_state.value())  # type: ignore[union-attr]
    two = json.dumps(bodies[1])
    assert OPAQUE[wire_format] not in two
    if wire_format == "messages":
        assert "thinking" not in bodies[1]  # no signed block to go back: thinking stays off
        assert '"type": "thinking"' not in two
    if wire_format == "responses":
        assert all(item["type"] != "reasoning" for item in bodies[1]["input"])
    if wire_format == "generate-content":
        # Gemini 3 still needs a signature on the call: the documented placeholder.
        assert bodies[1]["contents"][1]["parts"][0]["thoughtSignature"] == SIGNATURE_PLACEHOLDER


@pytest.mark.parametrize("wire_format", sorted(LOOPS))
def test_carry_reasoning_off_sends_no_state(wire_format: str):
    bodies, _ = run_loop(wire_format, False, carry_reasoning=False)
    assert OPAQUE[wire_format] not in json.dumps(bodies[1])
    if wire_format == "responses":
        assert "include" not in bodies[0]
    if wire_format == "messages":
        assert "thinking" not in bodies[1]


def test_cache_off_sends_no_breakpoints():
    bodies, _ = run_loop("messages", False, cache=False)
    assert all('"cache_control"' not in json.dumps(body) for body in bodies)
    assert bodies[1]["system"] == SYSTEM


def test_state_never_goes_to_another_provider_with_the_same_model():
    loop = LOOPS["messages"]
    asked = (Message("system", SYSTEM), Message("user", ASK))
    request = Request(loop.model, asked, tools=(READ,), reasoning_effort="high")
    with (
        LoopbackServer(ReplyQueue([_reply(loop.turn1[0])])) as one,
        LoopbackServer(ReplyQueue([_reply(loop.turn2[0])])) as other,
    ):
        codec = codec_for("messages")
        first = HttpProvider(codec, one.base_url).complete(request, deadline=time.monotonic() + 30)
        follow = Request(loop.model, (*asked, first.message, *_results(first)), tools=(READ,))
        HttpProvider(codec, other.base_url).complete(follow, deadline=time.monotonic() + 30)
        sent = other.requests[0].body.decode()
    assert first.message.reasoning_state is not None
    assert first.message.reasoning_state.provider == one.base_url
    assert first.message.reasoning_state.model == loop.model  # the id asked for, not the dated one
    assert OPAQUE["messages"] not in sent and '"thinking"' not in sent
