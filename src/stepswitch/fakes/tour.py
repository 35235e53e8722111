"""The scripted tour (`tour: true` in a script; `ssw demo --repo PATH`): canned replies that fit
any repository, so a user with no key sees ssw's steps, gates, review and records on their own
code. It reads no code and changes nothing: each step looks at the top folder once at most and
says it is scripted; a review approves (there is no change to judge); the project's own gates
run on the untouched tree and give their real verdict. Nothing it says is about any model."""

from __future__ import annotations

import json
from typing import Any

from stepswitch.fakes.scripted import ScriptedReply, ScriptedToolCall
from stepswitch.steps import STEPS, StepType

NOTE = "scripted tour: a canned reply, no model read this repository"

# What each step says; a step is told apart by the tools it may call (stepswitch.steps).
_SAYS = {
    StepType.PLAN: "the plan: look around, change nothing, let the gates judge the tree",
    StepType.NAVIGATE: "the repository's top folder, as listed above",
    StepType.READ: "nothing read",
    StepType.RUN: "no command run: the gates run the project's own checks",
    StepType.EDIT: "no edit: a script cannot know what to change here",
    StepType.TRIAGE: "no diagnosis: the gates' report is the real one",
    StepType.SUMMARIZE: "nothing was changed",
}
_BY_TOOLS = {STEPS[step].tools: step for step in _SAYS}


def _done(summary: str) -> ScriptedReply:
    return ScriptedReply(
        tool_calls=[ScriptedToolCall(name="done", arguments={"summary": f"({NOTE}) {summary}"})]
    )


def tour_reply(body: dict[str, Any]) -> ScriptedReply:
    """The reply to one chat-completions request of a run."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":  # a review
        reasons = f"{NOTE}; the tour changes nothing, so there is nothing to reject"
        return ScriptedReply(content=json.dumps({"verdict": "approve", "reasons": reasons}))
    tools = frozenset(t.get("function", {}).get("name") for t in body.get("tools") or [])
    step = _BY_TOOLS.get(tools)
    messages = body.get("messages") or []
    answered = bool(messages) and messages[-1].get("role") == "tool"
    if step is StepType.NAVIGATE and not answered:
        return ScriptedReply(tool_calls=[ScriptedToolCall(name="list_dir", arguments={})])
    return _done(_SAYS.get(step, "done") if step else "done")
