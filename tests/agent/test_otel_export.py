"""`ssw run` as a real process, traced by OpenTelemetry's own environment variables: its spans
reach an OTLP/HTTP collector on 127.0.0.1 (a loopback server that keeps each request), at every
end, Ctrl-C included, as one tree (the pre-flight, the steps and their tool calls, the gates,
the review and its calls under the run's span); asked for without the `otel` extra, one line
says how to install it. The models are SCRIPTED (replayed replies)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.proto")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from stepswitch.cli.otel import otel_sinks
from stepswitch.errors import UsageError
from stepswitch.fakes.loopback import LoopbackServer, Reply, ReplyQueue
from stepswitch.records.folder import load_run
from stepswitch.records.steps import ModelStep
from tests.harness.repo import sample_repo
from tests.harness.task import (
    BUG_TASK,
    approve_and_summarize,
    done,
    explore,
    fix_the_bug,
    ledger_count,
    run_command,
)

FAKE_KEY = "sk-otel-test-0123456789abcdef"  # must reach no span
COLLECTOR_KEY = "canary-collector-5e1f"  # a vendor's key, in OTEL_EXPORTER_OTLP_HEADERS


@pytest.fixture
def collector() -> Iterator[LoopbackServer]:
    """An OTLP/HTTP collector: POST /v1/traces answered 200 with an empty response."""
    ok = Reply(200, b"", {"Content-Type": "application/x-protobuf"})
    with LoopbackServer(ReplyQueue([ok]), path_prefix="") as server:
        yield server


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
    env.pop("SSW_LEDGER", None)
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", "OPENAI_API_KEY": FAKE_KEY, **extra}


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(x) for x in v.array_value.values)
    return getattr(v, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


def received(server: LoopbackServer) -> tuple[list[Span], dict[str, Any]]:
    """Every span the collector was sent, and the resource they came with."""
    spans: list[Span] = []
    resource: dict[str, Any] = {}
    for request in server.requests:
        assert (request.method, request.path) == ("POST", "/v1/traces")
        assert request.headers["content-type"] == "application/x-protobuf"
        export = ExportTraceServiceRequest.FromString(request.body)
        for rs in export.resource_spans:
            resource = _attributes(rs.resource.attributes)
            spans += [s for ss in rs.scope_spans for s in ss.spans]
    return spans, resource


def test_ssw_run_sends_its_spans_to_the_otlp_endpoint_its_environment_names(
    tmp_path: Path, collector: LoopbackServer
):
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    # Unconfined, so that the run says which secrets its commands could read.
    command = run_command(tmp_path, repo, explore(), "--max-steps", "2", "--sandbox", "none")
    env = _env(
        OTEL_EXPORTER_OTLP_ENDPOINT=collector.base_url,
        OTEL_EXPORTER_OTLP_HEADERS=f"x-collector-key={COLLECTOR_KEY}",
    )
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    assert result.returncode == 1, result.stderr  # the limit: two steps
    run = load_run(next((repo / ".ssw" / "runs").iterdir()))
    steps = [e for e in run.steps if isinstance(e, ModelStep)]
    spans, resource = received(collector)
    assert resource["service.name"] == "stepswitch"
    assert sorted(s.name for s in spans if s.name.startswith("chat ")) == sorted(
        f"chat {s.model}" for s in steps
    )
    (root,) = [s for s in spans if not s.parent_span_id]
    a = _attributes(root.attributes)
    assert (a["ssw.run_id"], a["ssw.outcome"], a["ssw.exit_code"]) == (run.run.run_id, "limit", 1)
    chats = sorted(
        (s for s in spans if s.name.startswith("chat ")), key=lambda s: s.start_time_unix_nano
    )
    by_id = {s.span_id: s for s in spans}
    for span, step in zip(chats, steps, strict=True):
        assert by_id[span.parent_span_id].parent_span_id == root.span_id  # under its step's
        assert span.trace_id == root.trace_id
        c = _attributes(span.attributes)
        assert (c["gen_ai.request.model"], c["gen_ai.response.model"]) == (
            step.model,
            step.served_model,
        )
        assert (c["gen_ai.usage.input_tokens"], c["gen_ai.usage.output_tokens"]) == (
            step.prompt_tokens,
            step.completion_tokens,
        )
        assert c["gen_ai.usage.cache_read.input_tokens"] == step.cached_tokens
    sent = b"".join(r.body for r in collector.requests)
    assert BUG_TASK.encode() not in sent and FAKE_KEY.encode() not in sent
    assert COLLECTOR_KEY.encode() not in sent
    # The headers were taken out of every environment with the keys, and still sent.
    assert {r.headers["x-collector-key"] for r in collector.requests} == {COLLECTOR_KEY}
    (said,) = [line for line in result.stdout.splitlines() if line.startswith("secrets: ")]
    assert "OTEL_EXPORTER_OTLP_HEADERS" in said and "taken out of every environment" in said
    assert COLLECTOR_KEY not in result.stdout + result.stderr


class Tree:
    """The spans of one trace as the collector got them, each with its children in the order
    they began."""

    def __init__(self, spans: list[Span]) -> None:
        (self.root,) = [s for s in spans if not s.parent_span_id]
        assert {s.trace_id for s in spans} == {self.root.trace_id}
        self.spans = spans

    def children(self, parent: Span) -> list[Span]:
        kids = [s for s in self.spans if s.parent_span_id == parent.span_id]
        return sorted(kids, key=lambda s: s.start_time_unix_nano)

    def parent(self, span: Span) -> Span | None:
        return next((s for s in self.spans if s.span_id == span.parent_span_id), None)


def _traced_run(work: Path, collector: LoopbackServer, replies: list[dict[str, Any]]) -> Any:
    """`ssw run` with the collector's endpoint; its exit code, record folder and span tree."""
    repo = sample_repo(work / "repo", "mean_bug")
    command = run_command(work, repo, replies)
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=collector.base_url)
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    run = load_run(next((repo / ".ssw" / "runs").iterdir()))
    spans, _ = received(collector)
    return result, run, Tree(spans)


def test_a_runs_trace_is_a_tree_preflight_and_steps_with_their_tools_gates_and_the_review(
    tmp_path: Path, collector: LoopbackServer
):
    replies = [*explore(), *fix_the_bug(), *approve_and_summarize()]
    result, run, tree = _traced_run(tmp_path, collector, replies)

    assert result.returncode == 0, result.stderr
    steps = [e for e in run.steps if isinstance(e, ModelStep)]
    worked = [s for s in steps if s.step_type != "review"]
    reviewed = [s for s in steps if s.step_type == "review"]
    root = tree.root
    [preflight] = [s for s in tree.children(root) if s.name == "preflight"]
    rest = [s for s in tree.children(root) if s.span_id != preflight.span_id]
    assert [s.name for s in rest] == [
        *(f"step {s.step_type}" for s in worked[:-1]),
        "gates",
        "review",
        f"step {worked[-1].step_type}",
    ]
    # The pre-flight, its gates as children, inside the run's span; a first run's gates ran
    # beside the plan's step (ADR 0088): their verdict came after the plan's call began and
    # before the second step's.
    assert (
        [s.name for s in tree.children(preflight)]
        == [f"gate {g.name}" for g in run.run.baseline_gates]
        != []
    )
    assert root.start_time_unix_nano <= preflight.start_time_unix_nano
    assert rest[0].start_time_unix_nano < preflight.end_time_unix_nano
    assert preflight.end_time_unix_nano <= rest[1].start_time_unix_nano
    # Each step: its model call, then an execute_tool span per tool call its model asked for.
    for span, step in zip([s for s in rest if s.name.startswith("step ")], worked, strict=True):
        chat, *tools = tree.children(span)
        assert chat.name == f"chat {step.model}" and chat.kind == Span.SPAN_KIND_CLIENT
        assert [t.name for t in tools] == [f"execute_tool {c.name}" for c in step.tool_calls]
        assert len(tools) >= 1
        for t, call in zip(tools, step.tool_calls, strict=True):
            a = _attributes(t.attributes)
            assert a["gen_ai.operation.name"] == "execute_tool"
            assert (a["gen_ai.tool.name"], a["gen_ai.tool.call.id"]) == (call.name, call.call_id)
    # The review: the reviewer's call and the second opinion's, in that order.
    (review,) = [s for s in rest if s.name == "review"]
    assert [s.name for s in tree.children(review)] == [f"chat {s.model}" for s in reviewed]
    assert _attributes(review.attributes)["ssw.review.verdict"] == "approve"
    assert len(reviewed) == 2
    # Every span lies within its parent's time.
    for span in tree.spans:
        parent = tree.parent(span)
        if parent is not None:
            assert parent.start_time_unix_nano <= span.start_time_unix_nano
            assert span.end_time_unix_nano <= parent.end_time_unix_nano
    # Each model call's span: where it went, the response's id, its cap and the conversation.
    chats = sorted(
        (s for s in tree.spans if s.name.startswith("chat ")), key=lambda s: s.start_time_unix_nano
    )
    for span, step in zip(chats, steps, strict=True):
        a = _attributes(span.attributes)
        assert a["server.address"] == "127.0.0.1"  # the scripted provider's loopback server
        assert step.server_port is not None and a["server.port"] == step.server_port
        assert a["gen_ai.response.id"] == step.request_id == f"scripted-{step.step}"
        assert a["gen_ai.request.max_tokens"] == 2048  # the policy's max_output_tokens
        assert a["gen_ai.conversation.id"] == run.run.run_id
        assert "error.type" not in a and span.status.code != Status.STATUS_CODE_ERROR
    sent = b"".join(r.body for r in collector.requests)
    assert BUG_TASK.encode() not in sent and FAKE_KEY.encode() not in sent


def test_a_failed_model_call_says_its_error_type_on_its_span(
    tmp_path: Path, collector: LoopbackServer
):
    # Replies for the exploring steps only: the edit step's call finds none (HTTP 400).
    result, run, tree = _traced_run(tmp_path, collector, explore())

    assert run.run.outcome == "error", result.stderr
    failed = max(
        (s for s in tree.spans if s.name.startswith("chat ")), key=lambda s: s.start_time_unix_nano
    )
    a = _attributes(failed.attributes)
    assert a["error.type"] == "400"  # the HTTP status the provider answered with
    assert failed.status.code == Status.STATUS_CODE_ERROR
    step = tree.parent(failed)
    assert step is not None and step.name == "step edit" and tree.children(step) == [failed]
    assert tree.root.status.code == Status.STATUS_CODE_ERROR


@pytest.mark.slow
def test_a_run_stopped_by_ctrl_c_still_sends_its_run_span_as_interrupted(
    tmp_path: Path, collector: LoopbackServer
):
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    replies = [explore()[0], done("x") | {"delay_s": 600}]  # the second call does not answer
    command = run_command(tmp_path, repo, replies)
    env = _env(OTEL_EXPORTER_OTLP_ENDPOINT=collector.base_url)
    proc = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        # The first call settled and the second reserved: that call is in flight.
        ledger = repo / ".ssw" / "ledger.sqlite"
        end = time.monotonic() + 120  # stops a hung test; asserts nothing about time
        while not (ledger_count(ledger, "settled") == 1 and ledger_count(ledger, "reserved")):
            assert proc.poll() is None and time.monotonic() < end, "no second call"
            time.sleep(0.05)  # polling a file another process writes; the check is the condition
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    spans, _ = received(collector)
    (root,) = [s for s in spans if not s.parent_span_id]
    assert _attributes(root.attributes)["ssw.outcome"] == "interrupted"
    assert root.status.code != Status.STATUS_CODE_ERROR  # a stop, not a failure
    # The first step, and the one the run ended under (recorded with its error).
    ordered = sorted(spans, key=lambda s: s.start_time_unix_nano)
    assert [s.name for s in ordered if s.name.startswith("chat ")] == [
        "chat scripted-large",
        "chat scripted-small",
    ]


def test_tracing_asked_for_without_the_extra_is_one_line_naming_the_install(tmp_path: Path):
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    # `ssw` with the opentelemetry packages made unimportable, as on an install without the extra.
    hide = (
        "import sys; sys.modules['opentelemetry'] = None; from stepswitch.cli import main; main()"
    )
    command = [sys.executable, "-c", hide, *run_command(tmp_path, repo, explore())[3:]]
    env = _env(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://127.0.0.1:9/v1/traces")
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    assert result.returncode == 2
    assert result.stderr == (
        "ssw: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, so the run would be traced, but "
        "OpenTelemetry is not installed: pip install 'stepswitch[otel]' (or unset "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)\n"
    )
    assert not (repo / ".ssw" / "runs").exists()


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
        {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
    ],
)
def test_without_opentelemetrys_variables_or_with_them_saying_none_a_run_is_not_traced(
    env: dict[str, str],
):
    assert otel_sinks(env) == ()


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"OTEL_TRACES_EXPORTER": "zipkin"},
            "OTEL_TRACES_EXPORTER=zipkin: ssw exports traces by otlp, console, none, not zipkin",
        ),
        (
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            },
            "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: ssw sends traces over OTLP/HTTP only; "
            "set it to http/protobuf or unset it",
        ),
    ],
)
def test_an_exporter_or_protocol_ssw_cannot_use_is_refused_naming_it(
    env: dict[str, str], said: str
):
    with pytest.raises(UsageError) as refused:
        otel_sinks(env)
    assert str(refused.value) == said


def test_the_console_exporter_writes_spans_to_stderr_so_json_on_stdout_stays_json(tmp_path: Path):
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    command = run_command(tmp_path, repo, explore(), "--max-steps", "1", "--json")
    env = _env(OTEL_TRACES_EXPORTER="console")
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)["outcome"] == "limit"  # stdout is the JSON and nothing else
    assert '"name": "invoke_agent stepswitch"' in result.stderr
    assert '"name": "chat scripted-large"' in result.stderr
