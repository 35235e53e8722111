"""How a simulated model plays one step, from what the request says: the step (told apart by the
tools it offers, or the JSON schema a review asks for), the turns taken so far in its tool loop,
and the diff a review is shown. What it knows of the task is the reference change alone."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from stepswitch.sim.population import TierBehaviour
from stepswitch.sim.reference import TaskReference, net_lines_of_diff
from stepswitch.sim.wrong import ToolCall, wrong_change
from stepswitch.steps import STEPS, StepType

LABEL = "simulated"
DIFF_TITLE = "## The change (diff against the start)"
# Where a guessing model thinks the repository is: outside it, so the tool refuses the call. A
# relative path, not an absolute one: records and evidence name no machine path (ADR 0028).
OUTSIDE = "../project"
_BY_TOOLS = {spec.tools: step for step, spec in STEPS.items() if spec.tools}


@dataclass(frozen=True)
class Play:
    """One reply: its text, its tool calls, and what it was (for tests and the server's log)."""

    step: str
    what: str
    content: str = ""
    calls: list[ToolCall] = field(default_factory=list)


def step_of(body: dict[str, Any]) -> StepType | None:
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return StepType.REVIEW
    tools = frozenset(t.get("function", {}).get("name") for t in body.get("tools") or [])
    return _BY_TOOLS.get(tools)


def earlier_calls(body: dict[str, Any]) -> list[ToolCall]:
    """The tool calls this step's conversation already holds, oldest first."""
    calls = []
    for message in body.get("messages") or []:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                args = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            calls.append((str(function.get("name")), args if isinstance(args, dict) else {}))
    return calls


def _outside(call: ToolCall) -> bool:
    return str(call[1].get("path", "")).startswith("/")


def _done(step: StepType, what: str, summary: str) -> Play:
    return Play(step.value, what, calls=[("done", {"summary": f"({LABEL}) {summary}"})])


@dataclass(frozen=True)
class Turn:
    """What one call knows: the request, its tier, its dice, and the task's reference."""

    body: dict[str, Any]
    tier: TierBehaviour
    rng: random.Random
    ref: TaskReference
    edit_attempt: int  # 1-based, counted by the server over the task run

    def play(self) -> Play:
        step = step_of(self.body)
        if step is None:
            return Play("unknown", "done", calls=[("done", {"summary": f"({LABEL}) done"})])
        return _PLAYS.get(step, _plain)(self, step)

    def guess(self, call: ToolCall) -> ToolCall:
        """The call, or (at the tier's error rate) the same with a path outside the repository."""
        if self.rng.random() >= self.tier.tool_error_rate:
            return call
        name, args = call
        return name, {**args, "path": f"{OUTSIDE}/{args.get('path', '.')}".rstrip("/.")}


def _plain(turn: Turn, step: StepType) -> Play:
    files = ", ".join(turn.ref.paths) or "(none)"
    says = {
        StepType.PLAN: "1. change " + files + "\n2. let the checks judge it",
        StepType.RUN: "ran nothing: the project's checks will show the failure",
        StepType.TRIAGE: f"the cause is in {files}: apply the fix there exactly",
        StepType.SUMMARIZE: f"Fix {turn.ref.task}\n\nChanged {files} ({LABEL} model).",
    }
    return _done(step, "done", says.get(step, "done"))


def _navigate(turn: Turn, step: StepType) -> Play:
    earlier = earlier_calls(turn.body)
    if any(not _outside(c) for c in earlier) or len(earlier) >= 3 or not turn.ref.paths:
        lines = "\n".join(f"{p}: the task changes it" for p in turn.ref.paths)
        return _done(step, "done", lines or "nothing found")
    names = sorted({PurePosixPath(p).name for p in turn.ref.paths})
    calls = [turn.guess(("find_files", {"pattern": f"**/{n}", "path": "."})) for n in names]
    return Play(step.value, "outside" if any(map(_outside, calls)) else "find", calls=calls)


def _read(turn: Turn, step: StepType) -> Play:
    earlier = earlier_calls(turn.body)
    read = {str(args.get("path")) for name, args in earlier if name == "read"}
    todo = [p for p in turn.ref.paths if turn.ref.before.get(p) is not None and p not in read]
    if not todo or len(earlier) >= 3 * max(1, len(turn.ref.paths)):
        notes = "\n".join(f"{p}: the lines the task needs changed" for p in turn.ref.paths)
        return _done(step, "done", notes or "nothing to read")
    calls = [turn.guess(("read", {"path": p})) for p in todo]
    return Play(step.value, "outside" if any(map(_outside, calls)) else "read", calls=calls)


def _edit(turn: Turn, step: StepType) -> Play:
    if earlier_calls(turn.body) or not turn.ref.paths:
        return _done(step, "done", f"changed {', '.join(turn.ref.paths)}")
    if turn.rng.random() < turn.tier.edit_rate(turn.edit_attempt):
        writes = [("write_file", {"path": p, "content": turn.ref.after[p]}) for p in turn.ref.paths]
        return Play(step.value, "right", calls=writes)
    kind, calls = wrong_change(turn.ref, turn.rng)
    return Play(step.value, kind, calls=calls)


def shown_diff(body: dict[str, Any]) -> str:
    """The diff a review is shown: its section of the last user message."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    text = str(users[-1].get("content") or "") if users else ""
    _, _, after = text.partition(DIFF_TITLE)
    return after.split("\n## ", 1)[0]


def _review(turn: Turn, step: StepType) -> Play:
    if net_lines_of_diff(shown_diff(turn.body)) == turn.ref.net_lines():
        verdict, what = "approve", "approve"
        reasons = f"({LABEL}) the change is the one the task needs"
    elif turn.rng.random() < turn.tier.review_catch_rate:
        verdict, what = "reject", "reject"
        reasons = f"({LABEL}) the change is not what the task needs: redo {turn.ref.paths}"
    else:
        verdict, what = "approve", "missed"
        reasons = f"({LABEL}) looks fine"
    content = json.dumps({"verdict": verdict, "reasons": reasons})
    return Play(step.value, what, content=content)


_PLAYS = {
    StepType.NAVIGATE: _navigate,
    StepType.READ: _read,
    StepType.EDIT: _edit,
    StepType.REVIEW: _review,
}
