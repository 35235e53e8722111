"""A run as OpenTelemetry spans (ADR 0033, ADR 0068): one root span for the run, begun when the
trace sink is made (as `ssw run` sets the run up), so the pre-flight lies inside it; under it a
`preflight` span (a child per gate), a span per step of a tool loop holding its model call
(named as the GenAI semantic conventions name a `chat` call) and an `execute_tool` span per tool
call it made, a `gates` span per gate run (a child per gate), and a `review` span holding the
reviewer's and the second opinion's calls. Only counts, names, ids, hosts, models, verdicts and
dollars: never a prompt, a model's text, a tool call's arguments or output, nor a key.

Events arrive after what they tell of has ended, so each span is given its start and end times
explicitly: a step's from the `Progress` that said it began, its tools' from theirs. Needs the
`otel` extra (`pip install 'stepswitch[otel]'`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from stepswitch import __version__
from stepswitch.agent.events import PREFLIGHT, Event, Progress, RunUpdate
from stepswitch.records.run import RunRecord
from stepswitch.records.steps import (
    Escalation,
    GateRecord,
    GateVerdicts,
    ModelStep,
    ReviewVerdicts,
    ToolCallRecord,
)

# The GenAI semantic conventions' names (semantic-conventions-genai), as strings: the SDK's
# semconv module marks them all as moved elsewhere, while the names themselves stay.
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"  # cached and cache-write tokens included
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"  # reasoning tokens included
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
RESPONSE_ID = "gen_ai.response.id"
MAX_TOKENS = "gen_ai.request.max_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

RUN_SPAN = "invoke_agent stepswitch"
ERROR_OUTCOMES = frozenset({"error", "harness_error"})  # a failure, not a verdict on the task

Attributes = dict[str, AttributeValue]


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _cost(attributes: Attributes, low: float, high: float) -> None:
    attributes["ssw.cost_usd.low"] = low
    attributes["ssw.cost_usd.high"] = high


def step_attributes(step: ModelStep) -> Attributes:
    """A model step's span attributes: the GenAI names where the conventions have one.
    `gen_ai.conversation.id` is the run's id: every call of a run is one conversation's."""
    a: Attributes = {
        OPERATION: "chat",
        PROVIDER: step.provider,
        REQUEST_MODEL: step.model,
        CONVERSATION_ID: step.run_id,
        "ssw.step": step.step,
        "ssw.step_type": step.step_type,
        "ssw.worker": step.worker,
        "ssw.escalation": step.escalation,
        "ssw.scripted": step.scripted,
        "ssw.attempts": step.attempts,
        "ssw.usage_reported": step.usage_reported,
        "ssw.tool_calls": [c.name for c in step.tool_calls],  # names only, never arguments
    }
    said: dict[str, AttributeValue | None] = {  # each only when the step has it
        RESPONSE_MODEL: step.served_model,
        RESPONSE_ID: step.request_id,
        MAX_TOKENS: step.max_output_tokens,
        SERVER_ADDRESS: step.server_address,
        SERVER_PORT: step.server_port,
        ERROR_TYPE: step.error_type,
        "ssw.effort": step.effort,
        "ssw.model_output_failure": step.model_output_failure,
        "ssw.fallback_from": step.fallback_from,  # the worker only: the reason names its URL
    }
    a |= {key: value for key, value in said.items() if value is not None}
    if step.usage_reported:  # otherwise the counts are unknown, not zero
        a[INPUT_TOKENS] = step.prompt_tokens
        a[OUTPUT_TOKENS] = step.completion_tokens
        a[CACHE_READ_TOKENS] = step.cached_tokens
        a[CACHE_WRITE_TOKENS] = step.cache_write_tokens
        a[REASONING_TOKENS] = step.reasoning_tokens
    if step.finish_reason is not None:
        a[FINISH_REASONS] = [step.finish_reason]
    if step.cost is not None:
        _cost(a, step.cost.low, step.cost.high)
    if step.review is not None:
        a["ssw.review.verdict"] = step.review.verdict
    return a


def tool_attributes(call: ToolCallRecord) -> Attributes:
    """A tool call's span attributes: its name and id, never its arguments or output. A call
    that did not do its work (refused, or failed) says which in `error.type`."""
    a: Attributes = {OPERATION: "execute_tool", TOOL_NAME: call.name, TOOL_TYPE: "function"}
    if call.call_id:
        a[TOOL_CALL_ID] = call.call_id
    if call.exit_code is not None:
        a["ssw.tool.exit_code"] = call.exit_code
    if not call.ok:
        a[ERROR_TYPE] = "refused" if call.refused else "failed"
    return a


def run_attributes(run: RunRecord) -> Attributes:
    a: Attributes = {
        AGENT_NAME: "stepswitch",
        OPERATION: "invoke_agent",
        CONVERSATION_ID: run.run_id,
        "ssw.run_id": run.run_id,
        "ssw.task_id": run.ids.task_id,
        "ssw.branch": run.branch,
        "ssw.scripted": run.scripted,
        "ssw.version": __version__,
        **{f"ssw.tag.{k}": v for k, v in run.tags.items()},
    }
    if run.ids.bench_id is not None:
        a["ssw.bench_id"] = run.ids.bench_id
    return a


def final_attributes(run: RunRecord) -> Attributes:
    t = run.totals
    a: Attributes = {
        "ssw.outcome": run.outcome,
        "ssw.gates_verdict": run.gates_verdict,
        "ssw.steps": t.steps,
        "ssw.escalations": t.escalations,
        "ssw.unpriced_steps": t.unpriced_steps,
        INPUT_TOKENS: t.prompt_tokens,
        OUTPUT_TOKENS: t.completion_tokens,
        CACHE_READ_TOKENS: t.cached_tokens,
        CACHE_WRITE_TOKENS: t.cache_write_tokens,
        REASONING_TOKENS: t.reasoning_tokens,
    }
    _cost(a, t.cost.low, t.cost.high)
    if run.exit_code is not None:
        a["ssw.exit_code"] = run.exit_code
    if run.review_verdict is not None:
        a["ssw.review.verdict"] = run.review_verdict
    if run.commit is not None:
        a["ssw.commit"] = run.commit
    return a


class TraceExport:
    """The sink that makes a run's spans on `provider` and, at the run's end (every end sends
    the final RunUpdate), flushes and shuts the provider down: it owns it, for one run, whose
    span begins when this sink is made."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer = provider.get_tracer("stepswitch", __version__)
        self._made = time.time_ns()  # the run's set-up (its worktree, the pre-flight) from here
        self._run: Span | None = None
        self._last_ns = 0  # when the event before this one arrived
        self._step_began: int | None = None  # the model call under way, said by its Progress
        self._tools_began: list[int] = []  # each of its tool calls, in the order they ran
        self._review: Span | None = None  # begun at the first review step since the last verdict
        self._verdict_ns: int | None = None  # a pre-flight beside the first call: its verdict
        self.failed: str | None = None  # why the trace stopped, when it did

    def on_event(self, event: Event) -> None:
        """Trace `event`. A trace that fails never ends the run: the first failure is said once
        on standard error, the trace stops there, and the run and its records go on."""
        if self.failed is not None:
            return
        try:
            self._on_event(event)
        except Exception as exc:  # the trace is an observer: the run is not its to end
            self.failed = f"{type(exc).__name__}: {exc}"
            print(
                f"ssw: the trace stopped ({self.failed}); the run goes on, its records whole",
                file=sys.stderr,
                flush=True,
            )

    def _on_event(self, event: Event) -> None:
        now = time.time_ns()
        if isinstance(event, RunUpdate):
            if not event.final:
                self._start(event.run, now)
            else:
                self._end(event.run, now)
        elif isinstance(event, Progress):
            self._progress(event, now)
        elif self._run is None:
            pass  # no run span to hang it on (a library caller's events without a RunUpdate)
        elif isinstance(event, ModelStep):
            self._step(self._run, event, now)
        elif isinstance(event, GateVerdicts):
            self._gates(self._run, event, now)
        elif isinstance(event, ReviewVerdicts):
            self._review_ends(self._run, event, now)
        elif isinstance(event, Escalation):
            self._run.add_event(
                "escalation",
                {
                    "ssw.escalation.to_level": event.to_level,
                    "ssw.escalation.to_worker": event.to_worker,
                    "ssw.escalation.reason": event.reason,  # ssw's words, never the model's
                },
                timestamp=now,
            )
        self._last_ns = now

    def _progress(self, event: Progress, now: int) -> None:
        """A model call or one of its step's tool calls began now (its text is not read)."""
        if event.what == "step":
            self._step_began, self._tools_began = now, []
        elif event.what == "tool":
            self._tools_began.append(now)
        elif event.what == PREFLIGHT:  # its gates are in the record at the run's end
            self._verdict_ns = now

    def _start(self, run: RunRecord, now: int) -> Span:
        """The run's span, from when this sink was made, and the pre-flight's in it."""
        self._run = self.tracer.start_span(
            RUN_SPAN, kind=SpanKind.INTERNAL, attributes=run_attributes(run), start_time=self._made
        )
        if run.baseline_gates:
            self._preflight(self._run, run.baseline_gates, now)
        return self._run

    def _child(
        self,
        parent: Span,
        name: str,
        attributes: Mapping[str, AttributeValue],
        start: int,
        end: int | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        error: str | None = None,
    ) -> Span:
        """A span under `parent` from `start`; ended at `end` unless that is None."""
        span = self.tracer.start_span(
            name,
            context=trace.set_span_in_context(parent),
            kind=kind,
            attributes=attributes,
            start_time=start,
        )
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        if end is not None:
            span.end(end_time=end)
        return span

    def _gate_children(self, parent: Span, gates: list[GateRecord], start: int, end: int) -> None:
        """A span per gate under `parent`, one after another from `start`, none past `end`."""
        cursor = start
        for gate in gates:  # in the order they ran
            ends = min(end, cursor + _ns(gate.duration_s))
            self._child(
                parent,
                f"gate {gate.name}",
                {"ssw.gate.name": gate.name, "ssw.gate.passed": gate.passed},
                cursor,
                ends,
            )
            cursor = ends

    def _preflight(self, run: Span, gates: list[GateRecord], now: int) -> None:
        """The pre-flight ended at `now` (the run's first record, or its verdict when it ran
        beside the first step, ADR 0088): its span is as long as its gates took, and never
        begins before the run's."""
        start = max(self._made, now - sum(_ns(g.duration_s) for g in gates))
        a: Attributes = {
            "ssw.gates.names": [g.name for g in gates],
            "ssw.gates.passed": all(g.passed for g in gates),
        }
        span = self._child(run, "preflight", a, start)
        self._gate_children(span, gates, start, now)
        span.end(end_time=now)

    def _step(self, run: Span, step: ModelStep, now: int) -> None:
        """A review's call goes under its `review` span; any other step is a `step` span
        holding its call and the tool calls it made, each as long as it ran."""
        length = _ns(step.duration_s)
        began = self._step_began
        if began is None:  # no Progress said when: the call cannot have ended after now
            began = min(self._last_ns, now - length)
        tools_began, self._step_began, self._tools_began = self._tools_began, None, []
        if step.step_type == "review":
            if self._review is None:
                self._review = self._child(run, "review", {}, began)
            self._chat(self._review, step, began, length)
            return
        a: Attributes = {
            "ssw.step": step.step,
            "ssw.step_type": step.step_type,
            "ssw.worker": step.worker,
        }
        span = self._child(run, f"step {step.step_type}", a, began)
        self._chat(span, step, began, length)
        call_end = began + length
        starts = [max(call_end, t) for t in tools_began[: len(step.tool_calls)]]
        starts += [now] * (len(step.tool_calls) - len(starts))  # not said: nothing to place
        ends = [*starts[1:], now][: len(starts)]  # each until the next began, the last now
        for call, start, end in zip(step.tool_calls, starts, ends, strict=True):
            self._child(span, f"execute_tool {call.name}", tool_attributes(call), start, end)
        span.end(end_time=max(now, call_end))

    def _chat(self, parent: Span, step: ModelStep, began: int, length: int) -> None:
        self._child(
            parent,
            f"chat {step.model}",
            step_attributes(step),
            began,
            began + length,
            kind=SpanKind.CLIENT,
            error=step.error,
        )

    def _gates(self, run: Span, verdicts: GateVerdicts, now: int) -> None:
        total = verdicts.timings.get("total_s")
        ran = sum(g.duration_s for g in verdicts.gates)
        length = _ns(total if isinstance(total, float) else ran)
        start = now - length
        a: Attributes = {
            "ssw.gates.names": [g.name for g in verdicts.gates],
            "ssw.gates.passed": verdicts.passed,
            "ssw.escalation": verdicts.escalation,
        }
        if verdicts.failed_gate is not None:
            a["ssw.gates.failed_gate"] = verdicts.failed_gate
        first = verdicts.timings.get("first_verdict_s")
        if isinstance(first, float):
            a["ssw.gates.first_verdict_s"] = first
        span = self._child(run, "gates", a, start)
        self._gate_children(span, verdicts.gates, start, now)
        span.end(end_time=now)

    def _review_ends(self, run: Span, verdicts: ReviewVerdicts, now: int) -> None:
        r = verdicts.review
        a: Attributes = {"ssw.review.verdict": r.verdict, "ssw.escalation": verdicts.escalation}
        if r.second_opinion is not None:
            a["ssw.review.second_opinion"] = r.second_opinion
        if r.agree is not None:
            a["ssw.review.agree"] = r.agree
        span = self._review or self._child(run, "review", {}, now)
        self._review = None
        span.set_attributes(a)
        span.end(end_time=now)

    def _end(self, run: RunRecord, now: int) -> None:
        span = self._run or self._start(run, now)
        if self._verdict_ns is not None and run.baseline_gates:  # it ran beside the first step
            self._preflight(span, run.baseline_gates, self._verdict_ns)
        if self._review is not None:  # the run ended before the review's verdict
            self._review.end(end_time=now)
            self._review = None
        span.set_attributes(final_attributes(run))
        if run.outcome in ERROR_OUTCOMES:
            span.set_status(Status(StatusCode.ERROR, run.reason))
        span.end(end_time=now)
        self._run = None
        self.provider.force_flush()
        self.provider.shutdown()
