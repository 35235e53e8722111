"""Every wire format end to end: the client, over real HTTP on 127.0.0.1, through a 429 first."""

import json
import time
from pathlib import Path

import pytest

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.wire.client import HttpProvider
from stepswitch.wire.open import codec_for
from stepswitch.wire.types import FinishReason, Message, Request

FIXTURES = Path(__file__).parent.parent / "fixtures"
SSE = {"Content-Type": "text/event-stream"}

# format -> (plain body, stream body, the path the request must reach, the auth header)
CASES = {
    "chat-completions": (
        "chat_completions/tool_calls_parallel.json",
        "chat_completions/stream_tool_calls.sse",
        "/v1/chat/completions",
        "authorization",
    ),
    "responses": (
        "responses/two_tool_calls.json",
        "responses/stream_two_tool_calls.sse",
        "/v1/responses",
        "authorization",
    ),
    "messages": (
        "messages/two_tool_uses.json",
        "messages/stream_two_tool_uses.sse",
        "/v1/messages",
        "x-api-key",
    ),
    "generate-content": (
        "generate_content/two_function_calls.json",
        "generate_content/stream_two_function_calls.sse",
        "/v1/models/m:generateContent",
        "x-goog-api-key",
    ),
}


def _body(name: str) -> str:
    text = (FIXTURES / name).read_text()
    if name.endswith(".json"):
        data = json.loads(text)
        data.pop("_source", None)
        return json.dumps(data)
    return text


class RateLimitedOnce:
    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.seen: list[RecordedRequest] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        self.seen.append(request)
        if len(self.seen) == 1:
            return Reply(429, {"error": "slow down"}, {"Retry-After": "0"})
        return self.reply


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("wire_format", sorted(CASES))
def test_two_tool_calls_arrive_through_a_429_in_every_format(wire_format: str, stream: bool):
    plain, streamed, path, auth = CASES[wire_format]
    reply = Reply(body=_body(streamed), headers=SSE) if stream else Reply(body=_body(plain))
    responder = RateLimitedOnce(reply)
    request = Request(model="m", messages=(Message("user", "go"),), stream=stream)
    with LoopbackServer(responder) as server:
        client = HttpProvider(codec_for(wire_format), server.base_url, api_key="k-123")
        completion = client.complete(request, deadline=time.monotonic() + 30)
    assert len(completion.message.tool_calls) == 2
    assert completion.finish_reason is FinishReason.TOOL_CALLS
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    assert len(responder.seen) == 2
    last = responder.seen[-1]
    expected = path
    if stream and wire_format == "generate-content":
        expected = "/v1/models/m:streamGenerateContent?alt=sse"
    assert last.path == expected
    assert "k-123" in last.headers[auth]
