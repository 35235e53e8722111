"""One phase of the machine: a step type's tool loop, from its prompt to the `done` call.

The phase keeps the conversation and answers model-output failures (the session records and
counts them, agent/step_facts.py): prose instead of a tool call (one nudge, then the phase
fails), thinking cut off by the token cap (one retry with effort "none" or a larger cap), an
answer cut at the token cap (one retry at twice the cap; its tool calls are not run), empty
content with a normal stop (treated like prose). The session stops the run at the third cut
reply (ADR 0062). A rung that runs out of steps raises
RungExhausted through the phase to the machine, which escalates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from stepswitch.agent.prompts import NUDGE, REVIEW_SCHEMA, SYSTEM_PROMPT, TaskBrief, step_context
from stepswitch.agent.session import CallSpec, Session
from stepswitch.agent.tools.execute import TOOLS, execute_call, tool_spec
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.records.steps import ReviewRecord, ReviewVerdict
from stepswitch.steps import STEPS, StepType
from stepswitch.wire.types import JsonSchemaFormat, Message, ToolSpec


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
    return _larger_cap(session, spec)


def _larger_cap(session: Session, spec: CallSpec) -> CallSpec:
    """Twice the output cap, within the model's own limit (the budget may still lower it)."""
    choice = session.choose(spec.step_type, spec.worker)
    model = session.models[choice.name]
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
        step = session.tool_step(
            replace(spec, messages=tuple(messages)),
            lambda call: execute_call(ws, call, table.tools),
        )
        completion = step.completion
        if step.failure in ("length_in_thinking", "cut_at_output_cap"):
            thinking = step.failure == "length_in_thinking"
            if retried:
                what = "thinking cut off" if thinking else "reply cut"
                result.failure = f"{what} by the token cap twice"
                return result
            retried = True  # once per phase, the cap raised (or thinking switched off)
            spec = _thinking_retry(session, spec) if thinking else _larger_cap(session, spec)
            continue
        if step.failure is not None:
            if nudged:
                result.failure = f"{step.failure} after a nudge"
                return result
            nudged = True
            messages.append(Message("assistant", completion.answer or "(empty)"))
            messages.append(Message("user", NUDGE.format(tools=", ".join(sorted(table.tools)))))
            continue
        # The provider's own message goes back as it came (with any reasoning state it carries).
        messages.append(completion.message)
        finished: str | None = None
        for call, outcome in zip(completion.message.tool_calls, step.results, strict=True):
            messages.append(Message("tool", outcome.output, tool_call_id=call.id, name=call.name))
            result.changed.update(outcome.changed_paths)
            if outcome.finished and finished is None:
                finished = outcome.output
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
    spec = CallSpec(StepType.REVIEW, messages, response_format=fmt, worker=worker)
    for _ in range(STEPS[StepType.REVIEW].max_turns):
        before = session.cut_replies
        review = session.review_step(spec, _parse_verdict)
        if review.verdict != "unparsed":
            return review.verdict, review.reasons
        if session.cut_replies > before:  # cut at the cap: the next try gets twice the room
            spec = _larger_cap(session, spec)
    return "unparsed", "the reviewer did not answer with the verdict object"


def _parse_verdict(text: str) -> ReviewRecord:
    try:
        data = json.loads(text.strip().removeprefix("```json").removesuffix("```"))
    except json.JSONDecodeError:
        return ReviewRecord(verdict="unparsed", reasons=text[:500])
    if not isinstance(data, dict) or data.get("verdict") not in ("approve", "reject"):
        return ReviewRecord(verdict="unparsed", reasons=text[:500])
    verdict: ReviewVerdict = "approve" if data["verdict"] == "approve" else "reject"
    return ReviewRecord(verdict=verdict, reasons=str(data.get("reasons", "")))
