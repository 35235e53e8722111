"""Reasoning state travels only inside the message that carries it: never in a repr or str,
raw_usage, an exception message, or a raw body kept for the record."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from stepswitch.errors import MalformedResponse
from stepswitch.fakes.loopback import LoopbackServer, Reply
from stepswitch.wire.client import HttpProvider
from stepswitch.wire.open import codec_for
from stepswitch.wire.sse import read_events
from stepswitch.wire.types import Message, Request

FIXTURES = Path(__file__).parent.parent / "fixtures"

# format -> (a recorded body with state, the opaque values in it)
STATEFUL = {
    "messages": (
        "messages/redacted_thinking_tool_use.json",
        ("EuYBCkQYAiJAredacted-case-sig", "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3"),
    ),
    "responses": (
        "responses/tool_loop_turn1_encrypted.json",
        ("gAAAAABpLoopOneOpaqueEncryptedReasoning0123456789abcdefXYZ==",),
    ),
    "generate-content": (
        "generate_content/sequential_call_signed.json",
        ("CiQBstepTwoCallSignature7w", "CiQBsignedTextOfStepTwoXq"),
    ),
}


def _body(name: str) -> dict[str, object]:
    data = json.loads((FIXTURES / name).read_text())
    data.pop("_source")
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize("wire_format", sorted(STATEFUL))
def test_no_repr_str_or_raw_usage_shows_the_state(wire_format: str):
    name, opaque = STATEFUL[wire_format]
    completion = codec_for(wire_format).decode(_body(name), "req-1")
    state = completion.message.reasoning_state
    assert state is not None
    assert all(value in state.payload for value in opaque)  # it is there, only hidden
    request = Request("m", (Message("user", "go"), completion.message))
    shown = [
        repr(completion.message),
        str(completion.message),
        repr(completion),
        str(completion),
        repr(state),
        str(state),
        repr(request),
        f"{completion}",
        json.dumps(completion.raw_usage),
    ]
    for text in shown:
        assert not any(value in text for value in opaque), text
        assert state.payload not in text
    assert f"{len(state.payload)} characters not shown" in repr(state)


@pytest.mark.parametrize("wire_format", sorted(STATEFUL))
def test_a_malformed_body_keeps_no_opaque_value(wire_format: str):
    name, opaque = STATEFUL[wire_format]
    body = _body(name)
    body["usage" if wire_format != "generate-content" else "usageMetadata"] = "not an object"
    with pytest.raises(MalformedResponse) as caught:
        codec_for(wire_format).decode(body, None)
    kept = caught.value.raw_body + str(caught.value)
    assert kept and not any(value in kept for value in opaque)
    assert '"[opaque]"' in caught.value.raw_body


def test_a_cut_stream_keeps_no_signature_in_its_raw_body():
    lines = (FIXTURES / "messages/stream_tool_loop_turn1_thinking.sse").read_text().splitlines(True)
    cut = [line for line in lines if "message_stop" not in line]
    with pytest.raises(MalformedResponse) as caught:
        codec_for("messages").decode_stream(read_events(cut), None)
    assert "signature_delta" in caught.value.raw_body
    assert "sig-turn-one-opaque" not in caught.value.raw_body


def test_the_client_keeps_no_opaque_value_from_an_unreadable_body():
    text = json.dumps(_body("messages/redacted_thinking_tool_use.json"))[:-40]  # cut short
    with LoopbackServer(lambda _: Reply(body=text)) as server:
        client = HttpProvider(codec_for("messages"), server.base_url)
        with pytest.raises(MalformedResponse) as caught:
            client.complete(Request("m", (Message("user", "go"),)), deadline=time.monotonic() + 30)
    assert "EuYBCkQYAiJAredacted-case-sig" not in caught.value.raw_body
    assert "redacted_thinking" in caught.value.raw_body
