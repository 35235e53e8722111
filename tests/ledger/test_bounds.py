"""Each way an attempt can end, through the real client and a loopback server: exact dollars
from usage, $0 when nothing can have been billed, a 0-to-reservation bound when usage is lost."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from stepswitch.errors import DeadlineExceeded, ProviderError
from stepswitch.fakes.loopback import LoopbackServer, Reply, ReplyQueue
from stepswitch.ledger import CallTracker, Ledger
from stepswitch.ledger.book import NO_USAGE, http_refusal
from stepswitch.ledger.pricing import worst_case_usd
from stepswitch.wire.client import HttpProvider, RetryPolicy
from stepswitch.wire.formats.chat_completions import ChatCompletionsCodec
from stepswitch.wire.types import Attempt, Message, Request

from .conftest import PRICE, chat_body, intent

REQUEST = Request(model="model-a", messages=(Message("user", "hello"),), max_output_tokens=1000)
USAGE = {"prompt_tokens": 50, "completion_tokens": 10}


def call(ledger: Ledger, base_url: str, timeout: float = 5.0, attempts: int = 1) -> CallTracker:
    provider = HttpProvider(
        ChatCompletionsCodec(), base_url, retry=RetryPolicy(attempts, base_delay=0.001)
    )
    tracker = CallTracker(ledger, intent())
    try:
        with tracker:
            provider.complete(
                REQUEST, deadline=time.monotonic() + 30, timeout=timeout, hooks=tracker.hooks
            )
    except ProviderError:
        pass
    finally:
        provider.close()
    return tracker


def only_row(tracker: CallTracker):
    assert len(tracker.rows) == 1
    return tracker.rows[0]


def assert_bound(ledger: Ledger, row) -> None:
    assert row.status == "bound"
    assert row.low_usd == 0.0
    assert row.high_usd == row.reserved_usd > 0
    assert row.usd is None
    assert ledger.lost_usage(row)
    assert row.dollars_text() == f"$0.0000-${row.reserved_usd:.4f}"


def test_usage_reported_settles_exactly(ledger):
    with LoopbackServer(ReplyQueue([Reply(body=chat_body(USAGE))])) as server:
        row = only_row(call(ledger, server.base_url))
    assert row.status == "settled"
    assert row.usd == pytest.approx((50 * 2.0 + 10 * 10.0) / 1e6)
    assert row.finish_reason == "stop" and row.request_id == "chatcmpl-1"
    assert not ledger.lost_usage(row)


def test_a_client_timeout_is_a_bound(ledger):
    with LoopbackServer(ReplyQueue([Reply(body=chat_body(USAGE), delay_s=5)])) as server:
        row = only_row(call(ledger, server.base_url, timeout=0.2))
    assert_bound(ledger, row)
    assert "timed out" in (row.error or "")


def test_a_dropped_connection_is_a_bound(ledger):
    with LoopbackServer(ReplyQueue([Reply(reset=True)])) as server:
        row = only_row(call(ledger, server.base_url))
    assert_bound(ledger, row)


def test_a_truncated_body_is_a_bound(ledger):
    with LoopbackServer(ReplyQueue([Reply(body=chat_body(USAGE), truncate_to=30)])) as server:
        row = only_row(call(ledger, server.base_url))
    assert_bound(ledger, row)


def test_missing_usage_is_a_bound_even_with_an_answer(ledger):
    with LoopbackServer(ReplyQueue([Reply(body=chat_body(None))])) as server:
        row = only_row(call(ledger, server.base_url))
    assert_bound(ledger, row)
    assert row.error == NO_USAGE and row.finish_reason == "stop"


def test_a_malformed_200_body_is_a_bound(ledger):
    with LoopbackServer(ReplyQueue([Reply(body="not json")])) as server:
        row = only_row(call(ledger, server.base_url))
    assert_bound(ledger, row)


@pytest.mark.parametrize("status", [429, 500, 503, 529, 401, 403, 404])
def test_an_http_error_status_costs_nothing(ledger, status):
    reply = Reply(status, {"error": "no"}, {"Retry-After": "0"})
    with LoopbackServer(ReplyQueue([reply])) as server:
        row = only_row(call(ledger, server.base_url))
    assert row.status == "error" and row.http_status == status
    assert row.usd == row.low_usd == row.high_usd == 0.0
    assert not ledger.lost_usage(row)


@pytest.mark.parametrize("status", [400, 422])
def test_a_rejected_request_may_bill_its_prompt_but_no_output(ledger, status):
    with LoopbackServer(ReplyQueue([Reply(status, {"error": "content_filter"})])) as server:
        row = only_row(call(ledger, server.base_url))
    assert row.status == "bound" and row.http_status == status
    prompt_only = worst_case_usd(PRICE, row.est_prompt_tokens, 0)
    assert row.low_usd == 0.0 and row.high_usd == pytest.approx(prompt_only)
    assert 0 < row.high_usd < row.reserved_usd
    assert ledger.lost_usage(row)


def test_retries_are_rows_too(ledger):
    replies = [
        Reply(429, "slow", {"Retry-After": "0"}),
        Reply(500, "x"),
        Reply(body=chat_body(USAGE)),
    ]
    with LoopbackServer(ReplyQueue(replies)) as server:
        tracker = call(ledger, server.base_url, attempts=3)
    assert [(r.attempt, r.status) for r in tracker.rows] == [
        (1, "error"),
        (2, "error"),
        (3, "settled"),
    ]
    assert len(ledger.rows()) == 3


def test_a_connection_never_made_costs_nothing(ledger):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    row = only_row(call(ledger, f"http://127.0.0.1:{port}/v1/"))
    assert row.status == "not_sent" and row.usd == row.high_usd == 0.0


def test_an_error_event_inside_a_200_stream_is_a_bound_not_a_refusal():
    mid_stream = Attempt(1, 529, "messages: overloaded_error: Overloaded", 1.0, None, kind="failed")
    refused = Attempt(1, 529, "HTTP 529", 1.0, None)
    auth = Attempt(1, 401, "the provider refused the key (HTTP 401); check it", 1.0, None)
    assert not http_refusal(mid_stream)
    assert http_refusal(refused) and http_refusal(auth)


def test_the_wire_client_tells_an_overloaded_stream_from_an_overloaded_answer(ledger):
    from stepswitch.wire.formats.messages import MessagesCodec

    folder = Path(__file__).parent.parent / "fixtures" / "messages"
    sse = {"Content-Type": "text/event-stream"}
    replies = [
        Reply(body=(folder / "stream_error.sse").read_text(), headers=sse),  # 200, then 529
        Reply(529, {"error": "overloaded"}, {"Retry-After": "0"}),
    ]
    tracker = CallTracker(ledger, intent())
    request = Request(model="claude", messages=REQUEST.messages, stream=True)
    with LoopbackServer(ReplyQueue(replies)) as server:
        provider = HttpProvider(MessagesCodec(), server.base_url, retry=RetryPolicy(2, 0.001))
        with pytest.raises(ProviderError), tracker:
            provider.complete(request, deadline=time.monotonic() + 30, hooks=tracker.hooks)
        provider.close()
    assert [(r.http_status, r.status) for r in tracker.rows] == [(529, "bound"), (529, "error")]


def test_the_ledger_bills_by_the_attempts_kind_whatever_its_message_says(ledger):
    """The kind the client set decides, not the words: a refusal worded any way costs nothing,
    and an error status that came inside a stream is a bound even when it reads "HTTP 529"."""
    refused = Attempt(1, 429, "slow down, please", 0.1, None, kind="refused")
    in_stream = Attempt(1, 529, "HTTP 529", 0.1, None, kind="failed")
    rows = [ledger.settle(ledger.reserve(intent(), 1, 3000), a) for a in (refused, in_stream)]
    assert [r.status for r in rows] == ["error", "bound"]
    assert rows[0].high_usd == 0.0 and rows[1].high_usd == rows[1].reserved_usd


def test_an_exception_between_the_hooks_leaves_a_bound_not_an_open_reservation(ledger):
    tracker = CallTracker(ledger, intent())
    with pytest.raises(KeyboardInterrupt), tracker:
        tracker.hooks.before_attempt(1, 3000)  # type: ignore[misc]
        raise KeyboardInterrupt
    row = only_row(tracker)
    assert_bound(ledger, row)
    assert "KeyboardInterrupt" in (row.error or "")


def test_a_deadline_before_the_first_attempt_leaves_no_row(ledger):
    provider = HttpProvider(ChatCompletionsCodec(), "http://127.0.0.1:9/v1/")
    tracker = CallTracker(ledger, intent())
    with pytest.raises(DeadlineExceeded), tracker:
        provider.complete(REQUEST, deadline=time.monotonic() - 1, hooks=tracker.hooks)
    assert ledger.rows() == []


def test_a_row_settles_once(ledger):
    reservation = ledger.reserve(intent(), 1, 300)
    ledger.settle_lost(reservation, "gone")
    with pytest.raises(ValueError, match="already settled"):
        ledger.settle_lost(reservation, "again")
