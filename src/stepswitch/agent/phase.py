"""One phase of the machine: a step type's tool loop, from its prompt to the `done` call.

Model-output failures are handled here, counted and recorded: prose instead of a tool call
(one nudge, then the phase fails), thinking cut off by the token cap (one retry with effort
"none" or a larger cap), empty content with a normal stop (treated like prose).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from stepswitch.agent.prompts import (
    ALLOWED_TOOLS,
    NUDGE,
    REVIEW_SCHEMA,
    TaskBrief,
    step_context,
    system_prompt,
)
from stepswitch.agent.session import CallSpec, Session
from stepswitch.agent.tools.execute import TOOLS, execute_call, tool_spec
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.errors import RungExhausted
from stepswitch.policy.model import StepType
from stepswitch.records import ReviewRecord, ToolCallRecord
from stepswitch.registry.presets import get_model
from stepswitch.wire.types import FinishReason, JsonSchemaFormat, Message, ToolSpec

MAX_TURNS: dict[StepType, int] = {
    StepType.PLAN: 4,
    StepType.NAVIGATE: 6,
    StepType.READ: 6,
    StepType.RUN: 4,
    StepType.EDIT: 12,
    StepType.TRIAGE: 6,
    StepType.REVIEW: 2,
    StepType.SUMMARIZE: 2,
}
_ARG_CHARS = 2000
_EXCERPT_CHARS = 300


@dataclass
class PhaseResult:
    step_type: StepType
    summary: str = ""
    finished: bool = False
    failure: str | None = None  # why the phase ended without `done`
    changed: set[str] = field(default_factory=set)
    model_output_failures: int = 0


def _tools(step_type: StepType) -> tuple[ToolSpec, ...]:
    return tuple(tool_spec(name) for name in TOOLS if name in ALLOWED_TOOLS[step_type])


def _thinking_retry(session: Session, spec: CallSpec) -> CallSpec:
    """Effort "none" when the model accepts it, else twice the output cap."""
    choice = session.choose(spec.step_type, spec.worker)
    model = get_model(session.registry[choice.worker.provider], choice.worker.model)
    if "none" in model.reasoning_efforts:
        return replace(spec, effort="none")
    cap = 2 * (spec.max_output_tokens or choice.worker.max_output_tokens)
    if model.max_output_tokens:
        cap = min(cap, model.max_output_tokens)
    return replace(spec, max_output_tokens=cap)


def run_phase(
    session: Session, ws: Workspace, step_type: StepType, brief: TaskBrief
) -> PhaseResult:
    result = PhaseResult(step_type)
    allowed = ALLOWED_TOOLS[step_type]
    messages = [
        Message("system", system_prompt(step_type)),
        Message("user", step_context(step_type, brief)),
    ]
    spec = CallSpec(step_type, (), _tools(step_type))
    nudged = retried = False
    for _ in range(MAX_TURNS[step_type]):
        try:
            completion, record = session.call(
                CallSpec(**{**spec.__dict__, "messages": tuple(messages)})
            )
        except RungExhausted as exc:
            result.failure = f"rung_steps: {exc}"
            return result
        if completion.finish_reason is FinishReason.LENGTH_IN_THINKING:
            record.model_output_failure = "length_in_thinking"
            result.model_output_failures += 1
            session.finish(record)
            if retried:
                result.failure = "thinking cut off by the token cap twice"
                return result
            retried = True
            spec = _thinking_retry(session, spec)
            continue
        calls = completion.message.tool_calls
        if not calls:
            failure = (
                "empty_stop"
                if completion.finish_reason is FinishReason.EMPTY_STOP
                else "prose_instead_of_tool_call"
            )
            record.model_output_failure = failure
            result.model_output_failures += 1
            session.finish(record)
            if nudged:
                result.failure = f"{failure} after a nudge"
                return result
            nudged = True
            messages.append(Message("assistant", completion.answer or "(empty)"))
            messages.append(Message("user", NUDGE.format(tools=", ".join(sorted(allowed)))))
            continue
        messages.append(Message("assistant", completion.answer, calls))
        finished: str | None = None
        for call in calls:
            outcome = execute_call(ws, call, allowed)
            messages.append(Message("tool", outcome.output, tool_call_id=call.id, name=call.name))
            record.tool_calls.append(
                ToolCallRecord(
                    name=call.name,
                    arguments=call.arguments[:_ARG_CHARS],
                    ok=outcome.ok,
                    refused=outcome.refused,
                    exit_code=outcome.exit_code,
                    output_excerpt=outcome.output[:_EXCERPT_CHARS],
                )
            )
            result.changed.update(outcome.changed_paths)
            if outcome.finished and finished is None:
                finished = outcome.output
        session.finish(record)
        if finished is not None:
            result.summary, result.finished = finished, True
            return result
    result.failure = f"no `done` within {MAX_TURNS[step_type]} turns"
    return result


def review_change(session: Session, brief: TaskBrief, worker: str | None) -> tuple[str, str]:
    """A verdict ("approve", "reject" or "unparsed") and its reasons, from a JSON-schema answer."""
    messages = (
        Message("system", system_prompt(StepType.REVIEW)),
        Message("user", step_context(StepType.REVIEW, brief)),
    )
    fmt = JsonSchemaFormat("review_verdict", REVIEW_SCHEMA)
    for _ in range(MAX_TURNS[StepType.REVIEW]):
        completion, record = session.call(
            CallSpec(StepType.REVIEW, messages, response_format=fmt, worker=worker)
        )
        verdict, reasons = _parse_verdict(completion.answer)
        record.review = ReviewRecord(verdict=verdict, reasons=reasons)
        if verdict == "unparsed":
            record.model_output_failure = "review_not_json"
        session.finish(record)
        if verdict != "unparsed":
            return verdict, reasons
    return "unparsed", "the reviewer did not answer with the verdict object"


def _parse_verdict(text: str) -> tuple[str, str]:
    try:
        data = json.loads(text.strip().removeprefix("```json").removesuffix("```"))
    except json.JSONDecodeError:
        return "unparsed", text[:500]
    if not isinstance(data, dict) or data.get("verdict") not in ("approve", "reject"):
        return "unparsed", text[:500]
    return str(data["verdict"]), str(data.get("reasons", ""))
