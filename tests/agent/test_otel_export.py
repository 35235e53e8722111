"""`ssw run` as a real process, traced by OpenTelemetry's own environment variables: its spans
reach an OTLP/HTTP collector on 127.0.0.1 (a loopback server that keeps each request), at every
end, Ctrl-C included; asked for without the `otel` extra, one line says how to install it.
The models are SCRIPTED (replayed replies)."""

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
    done,
    explore,
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
    assert sorted(s.name for s in spans) == sorted(
        ["invoke_agent stepswitch", *(f"chat {s.model}" for s in steps)]
    )
    (root,) = [s for s in spans if not s.parent_span_id]
    a = _attributes(root.attributes)
    assert (a["ssw.run_id"], a["ssw.outcome"], a["ssw.exit_code"]) == (run.run.run_id, "limit", 1)
    chats = sorted((s for s in spans if s.parent_span_id), key=lambda s: s.start_time_unix_nano)
    for span, step in zip(chats, steps, strict=True):
        assert span.parent_span_id == root.span_id and span.trace_id == root.trace_id
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
    assert [s.name for s in sorted(spans, key=lambda s: s.start_time_unix_nano)][1:] == [
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
