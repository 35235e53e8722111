"""The HTTP client against a real loopback server that injects faults."""

import json
import time
from pathlib import Path

import pytest

from stepswitch.errors import (
    AuthError,
    DeadlineExceeded,
    MalformedResponse,
    ProviderError,
    RetriesExhausted,
)
from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply, ReplyQueue
from stepswitch.wire.client import HttpProvider, RetryPolicy, retry_after_seconds
from stepswitch.wire.formats.chat_completions import ChatCompletionsCodec
from stepswitch.wire.types import Message, Request

SECRET = "sk-test-SECRET-value-123"
OK_BODY = json.loads(
    (
        Path(__file__).parent.parent / "fixtures/chat_completions/tool_calls_parallel.json"
    ).read_text()
)
REQUEST = Request(model="m", messages=(Message("user", "hi"),))


class Clock:
    """Records the backoff waits instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def provider(server: LoopbackServer, clock: Clock | None = None, attempts: int = 4, **kw):
    return HttpProvider(
        ChatCompletionsCodec(),
        server.base_url,
        api_key=SECRET,
        retry=RetryPolicy(max_attempts=attempts, base_delay=0.5, max_delay=8),
        sleep=clock or Clock(),
        jitter=lambda: 1.0,
        **kw,
    )


def far() -> float:
    return time.monotonic() + 30


def test_429_is_retried_after_the_retry_after_header():
    replies = [Reply(429, {"error": "slow down"}, {"Retry-After": "3"}), Reply(body=OK_BODY)]
    clock = Clock()
    with LoopbackServer(ReplyQueue(replies)) as server:
        completion = provider(server, clock).complete(REQUEST, deadline=far())
    assert completion.message.tool_calls
    assert clock.waits == [3.0]
    assert len(server.requests) == 2


def test_500s_back_off_exponentially_then_succeed():
    replies = [Reply(500, "oops"), Reply(502, "bad gateway"), Reply(body=OK_BODY)]
    clock = Clock()
    with LoopbackServer(ReplyQueue(replies)) as server:
        provider(server, clock).complete(REQUEST, deadline=far())
    assert clock.waits == [0.5, 1.0]


def test_retries_are_bounded_in_count():
    with LoopbackServer(ReplyQueue([Reply(503, "down")])) as server:
        with pytest.raises(RetriesExhausted) as info:
            provider(server, attempts=3).complete(REQUEST, deadline=far())
    assert len(server.requests) == 3
    assert info.value.status == 503


def test_a_retry_that_would_end_past_the_deadline_is_not_made():
    replies = [Reply(429, "", {"Retry-After": "60"}), Reply(body=OK_BODY)]
    clock = Clock()
    with LoopbackServer(ReplyQueue(replies)) as server:
        with pytest.raises(DeadlineExceeded):
            provider(server, clock).complete(REQUEST, deadline=time.monotonic() + 5)
    assert clock.waits == []
    assert len(server.requests) == 1


def test_auth_errors_are_never_retried_and_never_show_the_key():
    echo = Reply(401, {"error": f"invalid key {SECRET}"})
    with LoopbackServer(ReplyQueue([echo])) as server:
        with pytest.raises(AuthError) as info:
            provider(server).complete(REQUEST, deadline=far())
    assert len(server.requests) == 1
    assert SECRET not in str(info.value)
    assert SECRET not in info.value.raw_body
    assert "[redacted]" in info.value.raw_body
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_other_client_errors_are_not_retried_and_keep_the_body():
    with LoopbackServer(ReplyQueue([Reply(400, {"error": "bad schema"})])) as server:
        with pytest.raises(ProviderError) as info:
            provider(server).complete(REQUEST, deadline=far())
    assert len(server.requests) == 1
    assert "bad schema" in info.value.raw_body


def test_slow_response_past_the_worker_timeout_raises_promptly():
    with LoopbackServer(ReplyQueue([Reply(body=OK_BODY, delay_s=30)])) as server:
        with pytest.raises(DeadlineExceeded) as info:
            provider(server).complete(REQUEST, deadline=far(), timeout=0.3)
    assert server.base_url in str(info.value) and "the worker's timeout of 0.3 s" in str(info.value)


def test_the_run_deadline_caps_a_longer_worker_timeout():
    with LoopbackServer(ReplyQueue([Reply(body=OK_BODY, delay_s=30)])) as server:
        with pytest.raises(DeadlineExceeded) as info:
            provider(server).complete(REQUEST, deadline=time.monotonic() + 0.3, timeout=600)
    assert server.base_url in str(info.value) and "the run's remaining" in str(info.value)


def test_a_slow_stream_is_cut_at_the_deadline():
    events = ['{"choices":[{"delta":{"content":"a"}}]}'] * 50
    with LoopbackServer(ReplyQueue([Reply(sse=events, sse_gap_s=0.1)])) as server:
        with pytest.raises(DeadlineExceeded):
            provider(server).complete(
                Request(model="m", messages=REQUEST.messages, stream=True),
                deadline=time.monotonic() + 0.5,
            )


def test_connection_reset_is_retried():
    with LoopbackServer(ReplyQueue([Reply(reset=True), Reply(body=OK_BODY)])) as server:
        completion = provider(server).complete(REQUEST, deadline=far())
    assert completion.usage is not None
    assert len(server.requests) == 2


def test_body_cut_short_of_its_content_length_is_retried():
    cut = Reply(body=OK_BODY, truncate_to=40)
    with LoopbackServer(ReplyQueue([cut, Reply(body=OK_BODY)])) as server:
        provider(server).complete(REQUEST, deadline=far())
    assert len(server.requests) == 2


def test_truncated_json_is_a_malformed_response_with_the_raw_body():
    text = json.dumps(OK_BODY)[:60]
    with LoopbackServer(ReplyQueue([Reply(body=text)])) as server:
        with pytest.raises(MalformedResponse) as info:
            provider(server).complete(REQUEST, deadline=far())
    assert info.value.raw_body == text
    assert len(server.requests) == 1


def test_missing_usage_gives_a_completion_without_usage():
    body = {k: v for k, v in OK_BODY.items() if k != "usage"}
    with LoopbackServer(ReplyQueue([Reply(body=body)])) as server:
        assert provider(server).complete(REQUEST, deadline=far()).usage is None


def test_request_id_header_is_kept_on_the_completion():
    reply = Reply(body=OK_BODY, headers={"x-request-id": "req-42"})
    with LoopbackServer(ReplyQueue([reply])) as server:
        assert provider(server).complete(REQUEST, deadline=far()).request_id == "req-42"


def test_every_attempt_is_reported_for_the_ledger():
    attempts = []
    replies = [Reply(500, "x"), Reply(body=OK_BODY, headers={"x-request-id": "r2"})]
    with LoopbackServer(ReplyQueue(replies)) as server:
        provider(server, on_attempt=attempts.append).complete(REQUEST, deadline=far())
    assert [(a.number, a.status, a.error is None) for a in attempts] == [
        (1, 500, False),
        (2, 200, True),
    ]
    assert attempts[1].request_id == "r2"


def test_streaming_through_the_client_collects_content_and_usage():
    events = [
        '{"id":"s","model":"m","choices":[{"delta":{"content":"Hel"}}]}',
        '{"id":"s","model":"m","choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}',
        '{"id":"s","model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}',
        "[DONE]",
    ]
    with LoopbackServer(ReplyQueue([Reply(sse=events)])) as server:
        completion = provider(server).complete(
            Request(model="m", messages=REQUEST.messages, stream=True), deadline=far()
        )
    assert completion.message.content == "Hello"
    assert completion.usage is not None and completion.usage.prompt_tokens == 5
    sent = server.requests[0].json()
    assert sent["stream"] is True


def test_the_server_sees_exactly_the_encoded_body():
    seen: list[RecordedRequest] = []

    def responder(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply(body=OK_BODY)

    with LoopbackServer(responder) as server:
        provider(server).complete(REQUEST, deadline=far())
    assert seen[0].path == "/v1/chat/completions"
    assert seen[0].json() == {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_retry_after_accepts_seconds_and_http_dates():
    assert retry_after_seconds("2.5") == 2.5
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("soon") is None


def test_an_overloaded_error_inside_a_stream_is_retried():
    from stepswitch.wire.formats.messages import MessagesCodec

    folder = Path(__file__).parent.parent / "fixtures" / "messages"
    sse = {"Content-Type": "text/event-stream"}
    overloaded = Reply(body=(folder / "stream_error.sse").read_text(), headers=sse)
    answer = Reply(body=(folder / "stream_thinking_and_text.sse").read_text(), headers=sse)
    with LoopbackServer(ReplyQueue([overloaded, answer])) as server:
        client = HttpProvider(
            MessagesCodec(), server.base_url, api_key=SECRET, sleep=Clock(), jitter=lambda: 1.0
        )
        completion = client.complete(
            Request(model="claude", messages=REQUEST.messages, stream=True), deadline=far()
        )
    assert completion.message.content
    assert len(server.requests) == 2


def test_hooks_see_each_attempt_before_it_leaves_and_after_it_ends():
    from stepswitch.wire.types import CallHooks

    events: list[tuple] = []
    hooks = CallHooks(
        before_attempt=lambda n, size: events.append(("before", n, size > 0)),
        after_attempt=lambda a: events.append(("after", a.number, a.status, a.sent)),
    )
    with LoopbackServer(ReplyQueue([Reply(500, "x"), Reply(body=OK_BODY)])) as server:
        provider(server).complete(REQUEST, deadline=far(), hooks=hooks)
    assert events == [
        ("before", 1, True),
        ("after", 1, 500, True),
        ("before", 2, True),
        ("after", 2, 200, True),
    ]


def test_a_refused_connection_is_an_attempt_that_never_left():
    from stepswitch.wire.types import CallHooks

    with LoopbackServer(ReplyQueue([Reply(body=OK_BODY)])) as server:
        url = server.base_url
    attempts: list = []
    client = HttpProvider(
        ChatCompletionsCodec(), url, retry=RetryPolicy(max_attempts=2), sleep=Clock()
    )
    with pytest.raises(RetriesExhausted):
        client.complete(REQUEST, deadline=far(), hooks=CallHooks(after_attempt=attempts.append))
    assert [a.sent for a in attempts] == [False, False]


def test_a_hook_that_refuses_stops_the_call_before_anything_is_sent():
    from stepswitch.wire.types import CallHooks

    def refuse(number: int, size: int) -> None:
        raise RuntimeError("over budget")

    with LoopbackServer(ReplyQueue([Reply(body=OK_BODY)])) as server:
        with pytest.raises(RuntimeError):
            provider(server).complete(
                REQUEST, deadline=far(), hooks=CallHooks(before_attempt=refuse)
            )
    assert server.requests == []


def test_a_plain_http_client_refuses_https_instead_of_skipping_verification():
    import httpx

    from stepswitch.wire.client import new_http_client

    with new_http_client(tls=False) as client, pytest.raises(httpx.UnsupportedProtocol):
        client.get("https://127.0.0.1:9/")


def test_each_attempt_says_how_it_ended_refused_failed_or_answered():
    """The kind the ledger bills by: an HTTP error status at the head is a refusal, whatever
    its status; an error inside a 200 stream or a cut body is a failure; a completion answers."""
    from stepswitch.wire.formats.messages import MessagesCodec
    from stepswitch.wire.types import CallHooks

    folder = Path(__file__).parent.parent / "fixtures" / "messages"
    sse = {"Content-Type": "text/event-stream"}
    replies = [
        Reply(429, "slow", {"Retry-After": "0"}),
        Reply(body=(folder / "stream_error.sse").read_text(), headers=sse),
        Reply(body=(folder / "stream_thinking_and_text.sse").read_text(), headers=sse, reset=True),
        Reply(body=(folder / "stream_thinking_and_text.sse").read_text(), headers=sse),
        Reply(401, "no"),
    ]
    attempts: list = []
    hooks = CallHooks(after_attempt=attempts.append)
    request = Request(model="claude", messages=REQUEST.messages, stream=True)
    with LoopbackServer(ReplyQueue(replies)) as server:
        client = HttpProvider(MessagesCodec(), server.base_url, sleep=Clock(), jitter=lambda: 1.0)
        client.complete(request, deadline=far(), hooks=hooks)
        with pytest.raises(AuthError):
            client.complete(request, deadline=far(), hooks=hooks)
    assert [(a.status, a.kind) for a in attempts] == [
        (429, "refused"),
        (529, "failed"),
        (None, "failed"),
        (200, "answered"),
        (401, "refused"),
    ]
