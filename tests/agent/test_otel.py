"""A run as OpenTelemetry spans (the `otel` extra): fed the events of real scripted runs, the
trace is a tree: the run's root span holds the pre-flight, a span per step (its model call and
an `execute_tool` span per tool call), a span per gate run and the review (its model calls),
with the GenAI conventions' attributes equal to the step records and no text from a prompt or a
model. All models here are SCRIPTED (replayed replies)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from stepswitch.agent.otel import TraceExport
from stepswitch.agent.prompts import SYSTEM_PROMPT
from stepswitch.cli.run import RunOptions, run_local
from stepswitch.records.folder import load_run
from stepswitch.records.run import RunRecord
from stepswitch.records.steps import GateVerdicts, ModelStep, StepEvent
from tests.harness.repo import sample_repo
from tests.harness.task import (
    BUG_TASK,
    DEFAULT_POLICY,
    approve_and_summarize,
    done,
    explore,
    tool,
    tried_plus_two,
    whole_fix,
    write_policy,
    write_script,
)


@dataclass
class Traced:
    run: RunRecord  # run.json, read back
    events: list[StepEvent]  # steps.jsonl, read back
    spans: tuple[ReadableSpan, ...]

    @property
    def root(self) -> ReadableSpan:
        (root,) = [s for s in self.spans if s.parent is None]
        return root

    def named(self, prefix: str) -> list[ReadableSpan]:
        return sorted(
            (s for s in self.spans if s.name.startswith(prefix)), key=lambda s: s.start_time or 0
        )

    @property
    def steps(self) -> list[ModelStep]:
        return [e for e in self.events if isinstance(e, ModelStep)]


def traced_run(work: Path, replies: list[dict[str, Any]]) -> Traced:
    """A scripted run through `ssw run`'s code with the trace sink on an in-memory exporter."""
    repo = sample_repo(work / "repo", "mean_bug")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    options = RunOptions(
        repo=repo,
        task=BUG_TASK,
        policy_path=write_policy(work, DEFAULT_POLICY),
        script=write_script(work, replies),
    )
    record = run_local(options, lambda line: None, extra_sinks=(TraceExport(provider),))
    loaded = load_run(repo / ".ssw" / "runs" / record.run_id)
    return Traced(loaded.run, loaded.steps, exporter.get_finished_spans())


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> Traced:
    replies = whole_fix()
    return traced_run(tmp_path_factory.mktemp("traced"), replies)


def _strings(span: ReadableSpan) -> list[str]:
    """Every text a span carries: attribute values, its events' attributes, its status."""
    values: list[Any] = [*(span.attributes or {}).values()]
    for event in span.events:
        values += (event.attributes or {}).values()
    values.append(span.status.description or "")
    out: list[str] = []
    for v in values:
        out += [str(x) for x in v] if isinstance(v, tuple | list) else [str(v)]
    return out


def _children(traced: Traced, parent: ReadableSpan) -> list[ReadableSpan]:
    return sorted(
        (s for s in traced.spans if s.parent and s.parent.span_id == parent.context.span_id),
        key=lambda s: s.start_time or 0,
    )


def test_a_run_is_one_trace_a_tree_of_preflight_steps_and_their_tools_gates_and_review(
    fixed: Traced,
):
    root = fixed.root
    assert root.name == "invoke_agent stepswitch"
    assert len({s.context.trace_id for s in fixed.spans}) == 1
    (verdicts,) = [e for e in fixed.events if isinstance(e, GateVerdicts)]
    # A first run of the commit: its gates ran beside the plan's step (ADR 0088), so the
    # pre-flight's span ends after the plan's began and before the second step's.
    (preflight,) = [s for s in _children(fixed, root) if s.name == "preflight"]
    steps_etc = [s for s in _children(fixed, root) if s is not preflight]
    assert (steps_etc[0].start_time or 0) < (preflight.end_time or 0)
    assert (preflight.end_time or 0) <= (steps_etc[1].start_time or 0)
    assert (
        [s.name for s in _children(fixed, preflight)]
        == [f"gate {g.name}" for g in fixed.run.baseline_gates]
        != []
    )
    # The run's steps in the order they ran, the gate run after the edit, then the review.
    worked = [s for s in fixed.steps if s.step_type != "review"]
    assert [s.name for s in steps_etc] == [
        *(f"step {s.step_type}" for s in worked[:-1]),
        "gates",
        "review",
        f"step {worked[-1].step_type}",
    ]
    step_spans = [s for s in steps_etc if s.name.startswith("step ")]
    for span, step in zip(step_spans, worked, strict=True):
        assert (span.attributes or {})["ssw.step"] == step.step
        chat, *tools = _children(fixed, span)
        assert chat.name == f"chat {step.model}"
        assert [t.name for t in tools] == [f"execute_tool {c.name}" for c in step.tool_calls]
        for t, call in zip(tools, step.tool_calls, strict=True):
            a = t.attributes or {}
            assert (a["gen_ai.operation.name"], a["gen_ai.tool.name"]) == (
                "execute_tool",
                call.name,
            )
            assert a["gen_ai.tool.call.id"] == call.call_id != ""
            assert "error.type" not in a  # each of these calls did its work
    assert sum(len(s.tool_calls) for s in worked) >= len(worked)  # every step called a tool
    (gates,) = [s for s in steps_etc if s.name == "gates"]
    assert [s.name for s in _children(fixed, gates)] == [f"gate {g.name}" for g in verdicts.gates]
    (review,) = [s for s in steps_etc if s.name == "review"]
    reviewed = [s for s in fixed.steps if s.step_type == "review"]
    assert [s.name for s in _children(fixed, review)] == [f"chat {s.model}" for s in reviewed]
    assert len(reviewed) == 2  # the reviewer's and the second opinion's
    by_id = {s.context.span_id: s for s in fixed.spans}
    for span in fixed.spans:  # every span lies within its parent's time, the pre-flight too
        if span.parent is not None:
            parent = by_id[span.parent.span_id]
            assert parent.start_time <= span.start_time <= span.end_time <= parent.end_time  # type: ignore[operator]


def test_each_model_step_span_carries_the_genai_attributes_of_its_record(fixed: Traced):
    chats = fixed.named("chat ")
    for span, step in zip(chats, fixed.steps, strict=True):  # in the order the steps ran
        a = span.attributes or {}
        assert span.name == f"chat {step.model}" and span.kind is SpanKind.CLIENT
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == step.provider == "scripted"
        assert a["gen_ai.request.model"] == step.model
        assert a["gen_ai.response.model"] == step.served_model
        assert a["gen_ai.usage.input_tokens"] == step.prompt_tokens > 0
        assert a["gen_ai.usage.output_tokens"] == step.completion_tokens > 0
        assert a["gen_ai.usage.cache_read.input_tokens"] == step.cached_tokens
        assert a["gen_ai.response.finish_reasons"] == (step.finish_reason,)
        assert a["gen_ai.conversation.id"] == fixed.run.run_id
        assert a["gen_ai.response.id"] == step.request_id == f"scripted-{step.step}"
        assert a["gen_ai.request.max_tokens"] == step.max_output_tokens == 2048  # the policy's
        # The scripted provider's loopback server: its host, and its port (no scheme default).
        assert a["server.address"] == step.server_address == "127.0.0.1"
        assert a["server.port"] == step.server_port
        assert "error.type" not in a
        assert (a["ssw.step"], a["ssw.step_type"], a["ssw.worker"]) == (
            step.step,
            step.step_type,
            step.worker,
        )
        assert a["ssw.scripted"] is True
        assert step.cost is not None
        assert (a["ssw.cost_usd.low"], a["ssw.cost_usd.high"]) == (step.cost.low, step.cost.high)
        # Steps are recorded after they end: the span is as long as the recorded call.
        assert span.end_time - span.start_time == int(step.duration_s * 1e9)  # type: ignore[operator]
        assert span.status.status_code is StatusCode.UNSET


def test_the_root_span_says_the_runs_id_outcome_and_bill(fixed: Traced):
    a = fixed.root.attributes or {}
    t = fixed.run.totals
    assert (a["ssw.run_id"], a["ssw.outcome"], a["ssw.exit_code"]) == (
        fixed.run.run_id,
        "done",
        0,
    )
    assert (a["ssw.cost_usd.low"], a["ssw.cost_usd.high"]) == (t.cost.low, t.cost.high)
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (
        t.prompt_tokens,
        t.completion_tokens,
    )
    assert a["ssw.steps"] == 9 and a["ssw.commit"] == fixed.run.commit
    assert fixed.root.status.status_code is StatusCode.UNSET


def test_the_gate_and_review_spans_carry_their_verdicts(fixed: Traced):
    (gates,) = fixed.named("gates")
    (verdicts,) = [e for e in fixed.events if isinstance(e, GateVerdicts)]
    assert gates.attributes is not None
    assert gates.attributes["ssw.gates.names"] == tuple(g.name for g in verdicts.gates)
    assert gates.attributes["ssw.gates.passed"] is True
    (review,) = fixed.named("review")
    assert review.attributes is not None
    assert (review.attributes["ssw.review.verdict"], review.attributes["ssw.review.agree"]) == (
        "approve",
        True,
    )
    # The review span begins with its first model call: the reviewer's.
    review_steps = [s for s in fixed.named("chat ") if s.attributes["ssw.step_type"] == "review"]  # type: ignore[index]
    assert len(review_steps) == 2
    assert review.start_time == review_steps[0].start_time


def test_no_span_carries_the_task_a_prompt_a_models_text_or_a_tool_calls_text(fixed: Traced):
    texts = [BUG_TASK, SYSTEM_PROMPT[:60]]
    for step in fixed.steps:
        texts += [step.text, *(c.arguments for c in step.tool_calls)]
        texts += [c.output for c in step.tool_calls]
        if step.review is not None:
            texts.append(step.review.reasons)
    for e in fixed.events:
        if isinstance(e, GateVerdicts):
            texts += [g.report for g in e.gates]
    forbidden = [t for t in texts if len(t) >= 20]  # shorter ones could be a name by chance
    assert len(forbidden) > 10
    carried = [s for span in fixed.spans for s in _strings(span)]
    assert [t for t in forbidden if any(t in s for s in carried)] == []


def test_a_provider_failure_ends_its_step_span_and_the_run_span_as_errors(tmp_path: Path):
    # Four replies for the exploring steps; the edit step's call finds no reply (HTTP 400).
    traced = traced_run(tmp_path, explore())

    assert traced.run.outcome == "error"
    chats = traced.named("chat ")
    assert len(chats) == len(traced.steps) == 5
    failed = chats[-1]
    assert failed.status.status_code is StatusCode.ERROR
    assert "asked for reply #5" in (failed.status.description or "")
    # The scripted server answered HTTP 400: the conventions' error.type is that status.
    assert (failed.attributes or {})["error.type"] == traced.steps[-1].error_type == "400"
    assert [s.status.status_code for s in chats[:-1]] == [StatusCode.UNSET] * 4
    assert traced.root.status.status_code is StatusCode.ERROR
    assert traced.root.attributes is not None
    assert traced.root.attributes["ssw.outcome"] == "error"


def test_failed_gates_are_verdicts_on_their_spans_and_an_escalation_is_an_event_of_the_run(
    tmp_path: Path,
):
    replies = [
        *explore(),
        *tried_plus_two(),  # triage on rung 0
        tool("edit", path="calc/ops.py", old="+ 2)", new="+ 3)"),
        done("tried + 3"),
        done("the + n is the bug"),  # triage on rung 1
        tool("edit", path="calc/ops.py", old="(len(values) + 3)", new="len(values)"),
        done("divide by len(values)"),
        *approve_and_summarize(),
    ]
    traced = traced_run(tmp_path, replies)

    assert traced.run.outcome == "done"
    gates = traced.named("gates")
    assert [(g.attributes or {}).get("ssw.gates.failed_gate") for g in gates] == [
        "tests:covered",
        "tests:covered",
        None,
    ]
    assert [(g.attributes or {})["ssw.gates.passed"] for g in gates] == [False, False, True]
    assert {g.status.status_code for g in gates} == {StatusCode.UNSET}  # a verdict, not an error
    assert [(g.attributes or {})["ssw.escalation"] for g in gates] == [0, 0, 1]
    (escalation,) = traced.root.events
    assert escalation.name == "escalation" and escalation.attributes is not None
    assert (
        escalation.attributes["ssw.escalation.to_level"],
        escalation.attributes["ssw.escalation.to_worker"],
    ) == (1, "large")
    assert escalation.attributes["ssw.escalation.reason"] == "the gates failed 2 times on rung 0"
    assert traced.root.attributes is not None
    assert traced.root.attributes["ssw.escalations"] == 1


def test_a_fallback_step_names_the_worker_it_came_from_on_its_span() -> None:
    from stepswitch.agent.otel import step_attributes
    from stepswitch.records.steps import ModelStep

    step = ModelStep(run_id="r", seq=2, step=2, step_type="plan", worker="backup",
                     provider="scripted", model="scripted-large", fallback_from="main",
                     fallback_reason="main: HTTP 503 at http://127.0.0.1:9/v1/")  # fmt: skip
    attributes = step_attributes(step)
    assert attributes["ssw.fallback_from"] == "main"
    assert not any("127.0.0.1" in str(v) for v in attributes.values())
    routed = step_attributes(step.model_copy(update={"fallback_from": None}))
    assert "ssw.fallback_from" not in routed


def test_a_tool_call_that_did_not_do_its_work_says_why_in_error_type_and_never_its_text() -> None:
    from stepswitch.agent.otel import tool_attributes
    from stepswitch.records.steps import ToolCallRecord

    refused = ToolCallRecord(
        name="edit", call_id="call_7", arguments="{}", ok=False, refused=True, output="no"
    )
    a = tool_attributes(refused)
    assert a == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "edit",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_7",
        "error.type": "refused",
    }
    failed = tool_attributes(refused.model_copy(update={"refused": False, "exit_code": 2}))
    assert (failed["error.type"], failed["ssw.tool.exit_code"]) == ("failed", 2)


@pytest.mark.parametrize(
    ("base_url", "server"),
    [
        ("https://api.example.com/v1", ("api.example.com", None)),
        ("https://api.example.com:443/v1", ("api.example.com", None)),  # the scheme's default
        ("http://127.0.0.1:8080/v1/", ("127.0.0.1", 8080)),
        ("https://user:pw@gateway.example.com:8443/v1?key=k", ("gateway.example.com", 8443)),
    ],
)
def test_a_model_call_span_names_its_providers_host_and_a_port_only_when_not_the_default(
    base_url: str, server: tuple[str, int | None]
) -> None:
    from stepswitch.agent.step_facts import server_of

    @dataclass
    class AtUrl:
        base_url: str

    assert server_of(AtUrl(base_url)) == server
    assert server_of(object()) == (None, None)  # a provider that says no URL


def test_a_trace_that_fails_never_ends_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    # A trace is an observer: an exporter or a bug of the trace's own raising in the middle of a
    # run stops the trace, said once, and the run finishes as it would untraced.
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the collector went away")

    monkeypatch.setattr(TraceExport, "_step", broken)
    traced = traced_run(tmp_path, whole_fix())
    assert (traced.run.outcome, traced.run.exit_code) == ("done", 0)
    err = capsys.readouterr().err
    assert err.count("ssw: the trace stopped") == 1
    assert "RuntimeError: the collector went away" in err
