"""One phase of the machine: a step type's tool loop, from its prompt to the `done` call.

Model-output failures are handled here, counted and recorded: prose instead of a tool call
(one nudge, then the phase fails), thinking cut off by the token cap (one retry with effort
"none" or a larger cap), empty content with a normal stop (treated like prose). A rung that runs
out of steps raises RungExhausted through the phase to the machine, which escalates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from stepswitch.agent.prompts import NUDGE, REVIEW_SCHEMA, SYSTEM_PROMPT, TaskBrief, step_context
from stepswitch.agent.session import CallSpec, Session
from stepswitch.agent.tools.execute import TOOLS, execute_call, tool_spec
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.records.steps import (
    ARGUMENT_CHARS,
    ReviewRecord,
    ReviewVerdict,
    ToolCallRecord,
    cut,
)
from stepswitch.steps import STEPS, StepType
from stepswitch.wire.types import FinishReason, JsonSchemaFormat, Message, ToolSpec


@dataclass
class PhaseResult:
    step_type: StepType
    summary: str = ""
    finished: bool = False
    failure: str | None = None  # why the phase ended without `done`
    changed: set[str] = field(default_factory=set)


def _tools(step_type: StepType) -> tuple[ToolSpec, ...]:
    allowed = STEPS[step_type].tools
    return tuple(tool_spec(name) for name in TOOLS if name in allowed)


def _thinking_retry(session: Session, spec: CallSpec) -> CallSpec:
    """Effort "none" when the model accepts it, else twice the output cap."""
    choice = session.choose(spec.step_type, spec.worker)
    model = session.models[choice.name]
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
    table = STEPS[step_type]
    messages = [
        Message("system", SYSTEM_PROMPT),
        Message("user", step_context(step_type, brief)),
    ]
    spec = CallSpec(step_type, (), _tools(step_type))
    nudged = retried = False
    for _ in range(table.max_turns):
        completion, facts = session.call(replace(spec, messages=tuple(messages)))
        if completion.finish_reason is FinishReason.LENGTH_IN_THINKING:
            session.record(facts, failure="length_in_thinking")
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
            session.record(facts, failure=failure)
            if nudged:
                result.failure = f"{failure} after a nudge"
                return result
            nudged = True
            messages.append(Message("assistant", completion.answer or "(empty)"))
            messages.append(Message("user", NUDGE.format(tools=", ".join(sorted(table.tools)))))
            continue
        # The provider's own message goes back as it came (with any reasoning state it carries).
        messages.append(completion.message)
        finished: str | None = None
        for call in calls:
            session.events.progress("tool", f"{call.name} {call.arguments[:ARGUMENT_CHARS]}")
            outcome = execute_call(ws, call, table.tools)
            messages.append(Message("tool", outcome.output, tool_call_id=call.id, name=call.name))
            # On the open step as each ends: a run ended by a later one still records it.
            facts.tool_calls.append(
                ToolCallRecord(
                    name=call.name,
                    arguments=call.arguments[:ARGUMENT_CHARS],
                    ok=outcome.ok,
                    refused=outcome.refused,
                    exit_code=outcome.exit_code,
                    output=cut(outcome.output),
                )
            )
            result.changed.update(outcome.changed_paths)
            if outcome.finished and finished is None:
                finished = outcome.output
        session.record(facts)
        if finished is not None:
            result.summary, result.finished = finished, True
            return result
    result.failure = f"no `done` within {table.max_turns} turns"
    return result


def review_change(
    session: Session, brief: TaskBrief, worker: str | None
) -> tuple[ReviewVerdict, str]:
    """A verdict ("approve", "reject" or "unparsed") and its reasons, from a JSON-schema answer.
    Each unparsed answer is a model-output failure; "unparsed" never approves."""
    messages = (
        Message("system", SYSTEM_PROMPT),
        Message("user", step_context(StepType.REVIEW, brief)),
    )
    fmt = JsonSchemaFormat("review_verdict", REVIEW_SCHEMA)
    for _ in range(STEPS[StepType.REVIEW].max_turns):
        completion, facts = session.call(
            CallSpec(StepType.REVIEW, messages, response_format=fmt, worker=worker)
        )
        verdict, reasons = _parse_verdict(completion.answer)
        session.record(
            facts,
            review=ReviewRecord(verdict=verdict, reasons=reasons),
            failure="review_not_json" if verdict == "unparsed" else None,
        )
        if verdict != "unparsed":
            return verdict, reasons
    return "unparsed", "the reviewer did not answer with the verdict object"


def _parse_verdict(text: str) -> tuple[ReviewVerdict, str]:
    try:
        data = json.loads(text.strip().removeprefix("```json").removesuffix("```"))
    except json.JSONDecodeError:
        return "unparsed", text[:500]
    if not isinstance(data, dict) or data.get("verdict") not in ("approve", "reject"):
        return "unparsed", text[:500]
    verdict: ReviewVerdict = "approve" if data["verdict"] == "approve" else "reject"
    return verdict, str(data.get("reasons", ""))
