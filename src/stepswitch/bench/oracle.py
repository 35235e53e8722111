"""The built-in contestants' provider: it answers the real step machine without a model.

`null` calls `done` at every step and approves the review: it changes nothing. `oracle` does the
same, except that it makes the task's reference change through the agent's own tools: the patched
files are computed in a scratch copy with `git apply`, then written whole with `write_file` in
the EDIT step. There is no delete tool, so a file the reference deletes is removed with the `run`
tool (`rm -f -- PATH`, inside the run's sandbox) in the RUN step, which comes before EDIT.
The gates and the grading then run for real. Every answer reports zero tokens for zero bytes
sent and goes through the ledger's hooks like any call, at the scripted preset's price of $0;
nothing leaves the machine.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Unpack

from stepswitch.bench.gitops import apply_patches
from stepswitch.bench.grading_layout import copy_tree
from stepswitch.bench.task import Task
from stepswitch.errors import HarnessError
from stepswitch.policy.model import WorkerConfig
from stepswitch.steps import StepType
from stepswitch.wire.provider import CallLimits
from stepswitch.wire.types import (
    Attempt,
    Completion,
    FinishReason,
    Message,
    Request,
    ToolCall,
    Usage,
)


@dataclass(frozen=True)
class ReferenceChange:
    writes: dict[str, str] = field(default_factory=dict)  # path -> its whole new content
    deletions: tuple[str, ...] = ()


def _files(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] == ".git" or path.is_dir():
            continue
        found[rel.as_posix()] = path
    return found


def reference_change(task: Task, checkout: Path, scratch: Path) -> ReferenceChange:
    """What the reference changes in `checkout`: files written whole, files deleted."""
    tree = scratch / "reference"
    copy_tree(checkout, tree)
    try:
        apply_patches(tree, task.patches)
    except RuntimeError as exc:
        raise HarnessError(f"oracle: the reference does not apply: {exc}") from exc
    before, after = _files(checkout), _files(tree)
    writes = {}
    for rel, path in after.items():
        if path.is_symlink():
            raise HarnessError(f"oracle: the reference makes a symbolic link ({rel})")
        data = path.read_bytes()
        if rel in before and before[rel].read_bytes() == data:
            continue
        try:
            writes[rel] = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HarnessError(f"oracle: write_file writes text; {rel} is not UTF-8") from exc
    deletions = tuple(rel for rel in before if rel not in after)
    return ReferenceChange(writes, deletions)


def step_of(request: Request) -> StepType | None:
    """The step a request is for: the session names it on the request."""
    return request.step_type


class BuiltinProvider:
    """A ProviderFactory and Provider in one, for one task run (it remembers what it did)."""

    def __init__(self, name: str, change: ReferenceChange | None) -> None:
        self.name = name
        self.change = change  # None: the null contestant
        self._edited = False
        self._deleted = False
        self._calls = 0

    def __call__(self, worker: str, config: WorkerConfig) -> BuiltinProvider:
        return self

    def complete(self, request: Request, **limits: Unpack[CallLimits]) -> Completion:
        hooks = limits.get("hooks")  # no time limit applies: the answer is made here
        if hooks and hooks.before_attempt:
            # No request body is made and no model reads one: 0 bytes, 0 tokens, both true
            # (a count of the messages' bytes would make its zero tokens an under-report).
            hooks.before_attempt(1, 0)
        completion = self._answer(request)
        if hooks and hooks.after_attempt:
            hooks.after_attempt(Attempt(1, 200, None, 0.0, None, completion))
        return completion

    def _answer(self, request: Request) -> Completion:
        step = step_of(request)
        if step is StepType.REVIEW:
            verdict = {"verdict": "approve", "reasons": f"{self.name}: no model reviews this"}
            return self._reply(request, content=json.dumps(verdict))
        first_turn = bool(request.messages) and request.messages[-1].role == "user"
        change = self.change
        deletes = change is not None and bool(change.deletions) and not self._deleted
        if change and first_turn and step is StepType.RUN and deletes:
            self._deleted = True
            command = "rm -f -- " + " ".join(shlex.quote(p) for p in change.deletions)
            return self._reply(request, calls=[("run", {"command": command})])
        if change and first_turn and step is StepType.EDIT and not self._edited:
            self._edited = True
            writes = [("write_file", {"path": p, "content": c}) for p, c in change.writes.items()]
            if writes:
                return self._reply(request, calls=writes)
        what = "the task's reference solution" if change else "no change"
        summary = f"{self.name} (built-in, no model): {what}"
        return self._reply(request, calls=[("done", {"summary": summary})])

    def _reply(
        self,
        request: Request,
        *,
        content: str = "",
        calls: list[tuple[str, dict[str, str]]] | None = None,
    ) -> Completion:
        tool_calls = []
        for name, arguments in calls or []:
            self._calls += 1
            tool_calls.append(ToolCall(f"{self.name}-{self._calls}", name, json.dumps(arguments)))
        return Completion(
            message=Message("assistant", content, tuple(tool_calls)),
            finish_reason=FinishReason.TOOL_CALLS if tool_calls else FinishReason.STOP,
            raw_finish_reason="tool_calls" if tool_calls else "stop",
            usage=Usage(),  # no model ran: zero tokens, reported (not lost)
            model=request.model,
        )
