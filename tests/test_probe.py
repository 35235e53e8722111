"""`run_probe` against scripted servers on 127.0.0.1: what it records for each kind of server."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import AuthError, ProviderError
from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.registry.presets import Effort, ModelSpec, Price, ProviderSpec
from stepswitch.wire.client import RetryPolicy
from stepswitch.wire.probe import run_probe
from stepswitch.wire.probe_report import (
    ProbeReport,
    ProbeResult,
    format_probe_summary,
    probe_exit_code,
    write_probe,
)

MODEL = "org/model-1"
# The probe's own retries, without the waits between them.
NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0)


def _spec(
    base_url: str, *, window: int | None = 4000, efforts: tuple[Effort, ...] = ()
) -> ProviderSpec:
    model = ModelSpec(
        family="fake",
        context_window=window,
        reasoning_efforts=efforts,
        capabilities=("tools", "parallel_tool_calls", "json_schema", "streaming"),
        price=Price(input=1, output=2, source="test", as_of=date(2026, 1, 1)),
    )
    return ProviderSpec(
        name="fake",
        display_name="Fake",
        base_url=base_url,
        wire_formats=("chat-completions",),
        models={MODEL: model},
    )


def _words(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content") or "").split()) for m in body["messages"])


def _call(name: str) -> dict[str, str]:
    return {"name": name, "arguments": '{"city": "Paris"}'}


def make_server(
    *,
    tools: bool = True,
    json_schema: bool = True,
    usage: bool = True,
    limit: int | None = 4000,
    rejected_efforts: tuple[str, ...] = ("high",),
) -> Callable[[RecordedRequest], Reply]:
    """A chat-completions server that answers each request by what the request asks for."""
    seen: set[bytes] = set()

    def respond(request: RecordedRequest) -> Reply:
        body = request.json()
        prompt = _words(body)
        if limit is not None and prompt > limit:
            return Reply(400, {"error": {"message": f"{prompt} tokens exceed {limit}"}})
        if "response_format" in body and not json_schema:
            return Reply(400, {"error": {"message": "response_format is not supported"}})
        if body.get("reasoning_effort") in rejected_efforts:
            return Reply(400, {"error": {"message": "unsupported reasoning_effort"}})
        cached = prompt if request.body in seen else 0
        seen.add(request.body)
        thinks = body.get("reasoning_effort") not in (None, "none")
        counts = {
            "prompt_tokens": prompt,
            "completion_tokens": 7,
            "total_tokens": prompt + 7,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": 5 if thinks else 0},
        }
        message: dict[str, Any] = {"role": "assistant", "content": "Hello there, how are you"}
        if "tools" in body and tools:
            calls = [
                {"id": f"c{i}", "type": "function", "function": _call(t["function"]["name"])}
                for i, t in enumerate(body["tools"])
            ]
            message = {"role": "assistant", "content": None, "tool_calls": calls}
        elif "response_format" in body:
            message["content"] = json.dumps({"answer": "yes", "sure": True})
        if thinks:
            message["reasoning_content"] = "count the letters"
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        if body.get("stream"):
            chunks: list[dict[str, Any]] = [
                {"id": "s1", "choices": [{"index": 0, "delta": {"content": "Hello"}}]},
                {"id": "s1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
            if usage:
                chunks.append({"id": "s1", "choices": [], "usage": counts})
            return Reply(sse=[*map(json.dumps, chunks), "[DONE]"])
        choice = {"index": 0, "message": message, "finish_reason": finish}
        reply: dict[str, Any] = {"id": "r1", "model": MODEL, "choices": [choice]}
        if usage:
            reply["usage"] = counts
        return Reply(body=reply)

    return respond


def _probe(
    responder: Callable[[RecordedRequest], Reply], check_context: bool = True, **spec: Any
) -> ProbeReport:
    with LoopbackServer(responder) as server:
        report = run_probe(
            _spec(server.base_url, **spec),
            MODEL,
            timeout_s=10,
            check_context=check_context,
            retry=NO_WAIT,
        )
        assert report.calls == len(server.requests) <= 15
        return report


def _ok(report: ProbeReport) -> dict[str, bool | None]:
    return {r.name: r.ok for r in report.results}


def test_a_capable_server_passes_every_check() -> None:
    report = _probe(make_server(), efforts=("low", "high"))
    assert _ok(report) == {
        "tool_call": True,
        "parallel_tool_calls": True,
        "json_schema": True,
        "streaming": True,
        "reasoning:low": True,
        "reasoning:high": False,
        "prompt_cache": True,
        "context_near_limit": True,
        "context_over_limit": True,
        "usage_fields": True,
    }
    assert report.result("parallel_tool_calls").measured["tool_calls"] == 2
    low = report.result("reasoning:low")
    assert low.measured["reasoning_tokens"] == 5
    assert "reasoning text returned" in low.detail
    high = report.result("reasoning:high")
    assert high.status == 400
    assert "'high' rejected" in high.detail
    cache = report.result("prompt_cache")
    assert cache.measured["cached_tokens"] == cache.measured["prompt_tokens"] > 1024
    assert cache.measured["first_cached_tokens"] == 0
    assert report.result("context_near_limit").measured["prompt_tokens"] == pytest.approx(
        3200, abs=5
    )
    assert report.result("context_over_limit").status == 400
    keys = report.result("usage_fields").usage_keys
    assert "prompt_tokens_details.cached_tokens" in keys
    assert "completion_tokens_details.reasoning_tokens" in keys
    # What the registry says sits beside what was seen.
    assert report.result("tool_call").registry_claims is True
    assert report.result("prompt_cache").registry_claims is False
    assert report.result("context_near_limit").registry_claims is None


def test_the_probe_sends_what_each_check_names() -> None:
    with LoopbackServer(make_server()) as server:
        run_probe(_spec(server.base_url, efforts=("low",)), MODEL, timeout_s=10)
        bodies = [r.json() for r in server.requests]
    assert [b.get("tool_choice") for b in bodies[:2]] == ["required", "required"]
    assert bodies[1]["parallel_tool_calls"] is True and len(bodies[1]["tools"]) == 2
    assert bodies[2]["response_format"]["type"] == "json_schema"
    assert bodies[3]["stream"] is True and bodies[3]["stream_options"] == {"include_usage": True}
    assert bodies[4]["reasoning_effort"] == "low"
    assert bodies[5] == bodies[6]  # the cache check repeats one request exactly
    assert all(b["model"] == MODEL for b in bodies)


def test_a_limited_server_is_recorded_check_by_check() -> None:
    responder = make_server(tools=False, json_schema=False, usage=False, limit=None)
    report = _probe(responder)
    ok = _ok(report)
    assert ok["tool_call"] is False and ok["parallel_tool_calls"] is False
    assert "no tool call" in report.result("tool_call").detail
    json_check = report.result("json_schema")
    assert (json_check.ok, json_check.status) == (False, 400)
    assert "response_format is not supported" in json_check.detail
    streaming = report.result("streaming")
    assert streaming.ok is False and "no usage in the stream" in streaming.detail
    assert ok["reasoning"] is None  # the registry lists no effort
    assert ok["prompt_cache"] is None  # no usage: a cache hit cannot be seen
    assert ok["usage_fields"] is False
    assert ok["context_near_limit"] is True
    over = report.result("context_over_limit")
    assert over.ok is False and "accepted" in over.detail


def test_a_window_smaller_than_the_registry_says_is_flagged() -> None:
    report = _probe(make_server(limit=3000))
    near = report.result("context_near_limit")
    assert near.ok is False
    assert "80% of the window refused (HTTP 400)" in near.detail
    assert near.measured["share"] == 0.5


def test_unknown_window_skips_the_context_checks() -> None:
    report = _probe(make_server(), window=None)
    assert _ok(report)["context_near_limit"] is None
    assert _ok(report)["context_over_limit"] is None


def test_a_hosted_model_skips_the_costly_context_checks_unless_asked() -> None:
    report = _probe(make_server(), check_context=None)
    near = report.result("context_near_limit")
    assert near.ok is None
    assert "--check-context" in near.detail


def test_a_lasting_server_error_leaves_the_check_unknown_not_failed() -> None:
    def overloaded(request: RecordedRequest) -> Reply:
        if "tools" in request.json():
            return Reply(503, {"error": "overloaded"})
        return make_server()(request)

    report = _probe(overloaded)
    tool = report.result("tool_call")
    assert (tool.ok, tool.status) == (None, 503)
    assert tool.detail.startswith("unknown: transient error (RetriesExhausted: ")
    assert "gave up after 3 attempts" in tool.detail
    assert report.result("json_schema").ok is True
    assert (
        "unknown after transient errors (429, 5xx, timeouts): tool_call, parallel_tool_calls"
        in (format_probe_summary(report))
    )
    assert probe_exit_code(report) == 0  # nothing the registry claims was seen to fail


def test_a_one_off_429_is_retried_and_the_model_can_do_tools() -> None:
    capable = make_server()
    refused: list[int] = []

    def rate_limited_once(request: RecordedRequest) -> Reply:
        if "tools" in request.json() and not refused:
            refused.append(429)
            return Reply(429, {"error": {"message": "rate limited"}})
        return capable(request)

    report = _probe(rate_limited_once)
    assert report.result("tool_call").ok is True
    assert refused == [429]
    assert probe_exit_code(report) == 0


def test_a_429_that_lasts_is_unknown_and_never_reads_as_cannot_do_tools() -> None:
    def rate_limited(request: RecordedRequest) -> Reply:
        if "tools" in request.json():
            return Reply(429, {"error": {"message": "rate limited"}})
        return make_server()(request)

    tool = _probe(rate_limited).result("tool_call")
    assert tool.ok is None and tool.status == 429
    assert tool.detail.startswith("unknown: transient error")


def test_a_claimed_capability_that_fails_makes_the_exit_code_1() -> None:
    report = _probe(make_server(tools=False))
    assert report.result("tool_call").registry_claims is True
    assert probe_exit_code(report) == 1
    assert "the registry claims what these checks did not find: tool_call, parallel_tool_calls" in (
        format_probe_summary(report)
    )


def test_a_probe_where_no_check_passes_exits_1_whatever_the_registry_claims() -> None:
    report = _probe(lambda _: Reply(400, {"error": {"message": "unsupported"}}), False)
    assert not any(r.ok for r in report.results)
    assert probe_exit_code(report) == 1
    assert format_probe_summary(report).endswith("no check passed")


def test_a_server_that_cannot_be_reached_stops_the_probe_naming_the_url() -> None:
    with LoopbackServer(make_server()) as server:
        url = server.base_url  # the port is free again once the server stops
    with pytest.raises(ProviderError, match=f"cannot reach {re.escape(url)} .*connection error"):
        run_probe(_spec(url), MODEL, timeout_s=10, retry=NO_WAIT)


def test_a_timeout_names_the_url_and_the_limit() -> None:
    capable = make_server()

    def slow_tools(request: RecordedRequest) -> Reply:
        if "tools" in request.json():
            return Reply(body={}, delay_s=5)
        return capable(request)

    with LoopbackServer(slow_tools) as server:
        report = run_probe(_spec(server.base_url), MODEL, timeout_s=0.2, retry=NO_WAIT)
        tool = report.result("tool_call")
        assert tool.ok is None
        assert f"no answer from {server.base_url}chat/completions within" in tool.detail
        assert "0.2 s" in tool.detail


def test_a_refused_key_aborts_the_probe() -> None:
    with LoopbackServer(lambda _: Reply(401, {"error": "bad key"})) as server:
        with pytest.raises(AuthError):
            run_probe(_spec(server.base_url), MODEL, timeout_s=10)
        assert len(server.requests) == 1


def test_write_probe_and_summary(tmp_path: Path) -> None:
    report = _probe(make_server(), efforts=("low",))
    path = write_probe(report, tmp_path)
    assert path == tmp_path / "probes" / "fake" / "org__model-1.json"
    data = json.loads(path.read_text())
    assert data["schema_version"] == 1
    assert (data["provider"], data["model"], data["wire_format"]) == (
        "fake",
        MODEL,
        "chat-completions",
    )
    assert ProbeReport.model_validate(data) == report
    summary = format_probe_summary(report)
    for result in report.results:
        assert result.name in summary
    assert summary.splitlines()[0].startswith("probe fake / org/model-1 (chat-completions)")


def test_summary_marks_skipped_and_failed_checks() -> None:
    report = ProbeReport(
        provider="p",
        model="m",
        base_url="http://127.0.0.1:1/v1/",
        wire_format="chat-completions",
        probed_at="2026-01-01T00:00:00+00:00",
        results=[
            ProbeResult(name="tool_call", ok=False, detail="x" * 300),
            ProbeResult(name="reasoning", ok=None, detail="no effort"),
        ],
    )
    lines = format_probe_summary(report).splitlines()
    assert lines[2].split()[:2] == ["tool_call", "NO"]
    assert lines[2].endswith("...") and len(lines[2]) < 140
    assert lines[3].split()[:2] == ["reasoning", "-"]


# --- Anthropic: a repeated prefix is read from the cache only when the request marks it ---

FIXTURES = Path(__file__).parent / "fixtures" / "messages"
HAIKU = "claude-haiku-4-5"


def _recorded(name: str) -> Reply:
    if name.endswith(".sse"):
        text = (FIXTURES / name).read_text()
        return Reply(body=text, headers={"Content-Type": "text/event-stream"})
    body = json.loads((FIXTURES / name).read_text())
    body.pop("_source")
    return Reply(body=body)


def _anthropic_spec(base_url: str) -> ProviderSpec:
    model = ModelSpec(
        family="claude",
        context_window=200000,
        capabilities=("tools", "streaming", "prompt_cache"),
        price=Price(input=1, output=5, source="test", as_of=date(2026, 1, 1)),
    )
    return ProviderSpec(
        name="anthropic",
        display_name="Anthropic",
        base_url=base_url,
        wire_formats=("messages",),
        models={HAIKU: model},
    )


def anthropic_server(*, caches: bool = True) -> Callable[[RecordedRequest], Reply]:
    """Recorded Messages replies; a marked prefix seen before is read from the cache."""
    seen: set[bytes] = set()

    def respond(request: RecordedRequest) -> Reply:
        body = request.json()
        if body.get("stream"):
            return _recorded("stream_thinking_and_text.sse")
        if b"cache_control" not in request.body:
            return _recorded("thinking_and_text.json")
        hit = caches and request.body in seen
        seen.add(request.body)
        return _recorded("prompt_cache_read.json" if hit else "prompt_cache_write.json")

    return respond


def test_anthropic_serves_a_repeated_marked_prefix_from_the_cache() -> None:
    with LoopbackServer(anthropic_server()) as server:
        report = run_probe(_anthropic_spec(server.base_url), HAIKU, timeout_s=10)
        marked = [r.json() for r in server.requests if b"cache_control" in r.body]
    cache = report.result("prompt_cache")
    assert cache.ok is True and cache.registry_claims is True
    assert cache.measured["cached_tokens"] == 5230
    assert cache.measured["first_cache_write_tokens"] == 5230
    assert "wrote 5230 to the cache" in cache.detail
    assert len(marked) == 2 and marked[0] == marked[1]
    system = marked[0]["system"]
    assert system[0]["cache_control"] == {"type": "ephemeral"}
    # Above Haiku 4.5's 4096-token minimum, with a margin.
    assert len(system[0]["text"].split()) > 4096


def test_anthropic_that_never_reads_the_cache_fails_the_check() -> None:
    with LoopbackServer(anthropic_server(caches=False)) as server:
        report = run_probe(_anthropic_spec(server.base_url), HAIKU, timeout_s=10)
    cache = report.result("prompt_cache")
    assert cache.ok is False
    assert cache.measured["cached_tokens"] == 0
