"""Contestants for the bench's tests: in-process providers driving the real step machine, tools,
gates, ledger and grading. Module-level and picklable, so worker processes can import them."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.bench.contestants import TaskRunPlace
from stepswitch.bench.oracle import step_of
from stepswitch.bench.results import ContestantKind
from stepswitch.bench.task import Task
from stepswitch.errors import ProviderError
from stepswitch.policy.model import Policy, WorkerConfig, validate_policy
from stepswitch.steps import StepType
from stepswitch.wire.types import (
    Attempt,
    CallHooks,
    Completion,
    FinishReason,
    Message,
    Request,
    ToolCall,
    Usage,
)

from . import FIXED

# What an agent could leave in its tree to fake a pass: a rewritten visible test, its own
# "hidden" tests, JUnit reports and a verdict file where a careless grader might read them.
CHEAT_FILES = {
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == -1\n",
    ".ssw_hidden/test_hidden.py": "def test_add():\n    pass\n",
    "report.xml": '<testsuite tests="1" failures="0" errors="0" skipped="0">'
    '<testcase classname="x" name="test_add"/></testsuite>\n',
    ".ssw_hidden/report.xml": '<testsuite tests="1"><testcase name="t"/></testsuite>\n',
    "grade.json": json.dumps({"passed": True, "tests": 1}) + "\n",
}


@dataclass(frozen=True)
class FakeContestant:
    """A policy-kind contestant with an in-process provider. `behaviour`:
    null          done at every step, approve
    fix           write the fixed calc.py in EDIT
    cheat         write CHEAT_FILES in EDIT, no fix;  cheat_fix: the fix and CHEAT_FILES
    provider_error  the first call fails (an HTTP 503)
    other_model   the provider says it served another model
    priced        like null, on a priced model, with sizeable usage (budgets)
    block         like null, but EDIT on `block_task` waits until `release` exists (300 s max)
    git_attack    RUN runs `attack` (shell text) in its copy; no fix
    write         write `files` (path, text pairs) in EDIT, and RUN runs `attack` if given
    vanish        like null, but EDIT removes the task's hidden tests folder on the host (a
                  harness fault: the task changed under the bench)
    """

    name: str
    behaviour: str = "null"
    model: str = "scripted-small"
    block_task: str = ""
    release: str = ""
    attack: str = ""
    files: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> ContestantKind:
        return "policy"

    @property
    def policy_path(self) -> str:
        return f"tests:{self.name}"

    def load_policy(self) -> Policy:
        worker = {"provider": "scripted", "model": self.model, "max_output_tokens": 1024}
        data = {
            "workers": {"w": {**worker, "timeout": 30}},
            "rules": [{"worker": "w"}],
            "escalation": {"ladder": ["w"]},
            "limits": {"max_steps": 30, "steps_per_rung": 30, "wall_time_s": 600},
            "review": {"reviewer": "w"},
        }
        return validate_policy(data, f"tests:{self.name}")

    def providers(self, place: TaskRunPlace) -> FakeProvider:
        return FakeProvider(self, place.task)


class FakeProvider:
    def __init__(self, contestant: FakeContestant, task: Task) -> None:
        self.c = contestant
        self.task = task.name
        self.hidden_tests = task.hidden_tests
        self.calls = 0
        self.edited = False

    def __call__(self, name: str, worker: WorkerConfig) -> FakeProvider:
        return self

    def complete(
        self,
        request: Request,
        *,
        deadline: float,
        timeout: float | None = None,
        hooks: CallHooks | None = None,
    ) -> Completion:
        self.calls += 1
        if self.c.behaviour == "provider_error":
            raise ProviderError("HTTP 503: the provider is overloaded", status=503)
        if hooks and hooks.before_attempt:
            hooks.before_attempt(1, sum(len(m.content) for m in request.messages))
        completion = self._answer(request)
        if hooks and hooks.after_attempt:
            hooks.after_attempt(Attempt(1, 200, None, 0.0, None, completion))
        return completion

    def _answer(self, request: Request) -> Completion:
        step = step_of(request)
        if step is StepType.REVIEW:
            return self._reply(request, content=json.dumps({"verdict": "approve", "reasons": "."}))
        first = request.messages[-1].role == "user"
        shell = self.c.behaviour in ("git_attack", "write") and self.c.attack
        if step is StepType.RUN and first and shell:
            return self._reply(request, calls=[("run", {"command": self.c.attack})])
        if step is StepType.EDIT and first and not self.edited:
            self.edited = True
            writes = self._writes()
            if self.c.behaviour == "vanish":
                shutil.rmtree(self.hidden_tests)
            if self.c.behaviour == "block" and self.task.endswith(self.c.block_task):
                end = time.monotonic() + 300
                while not Path(self.c.release).exists() and time.monotonic() < end:
                    time.sleep(0.05)
            if writes:
                calls = [("write_file", {"path": p, "content": c}) for p, c in writes.items()]
                return self._reply(request, calls=calls)
        return self._reply(request, calls=[("done", {"summary": "done"})])

    def _writes(self) -> dict[str, str]:
        fix = {"calc.py": FIXED.lstrip("\n")}
        return {
            "fix": fix,
            "cheat": CHEAT_FILES,
            "cheat_fix": {**CHEAT_FILES, **fix},
            "write": dict(self.c.files),
        }.get(self.c.behaviour, {})

    def _reply(
        self, request: Request, *, content: str = "", calls: list[tuple[str, Any]] | None = None
    ) -> Completion:
        tool_calls = tuple(
            ToolCall(f"f{self.calls}-{i}", name, json.dumps(args))
            for i, (name, args) in enumerate(calls or [])
        )
        usage = Usage(prompt_tokens=100, completion_tokens=10)
        if self.c.behaviour == "priced":
            usage = Usage(prompt_tokens=3000, cached_tokens=1000, completion_tokens=200)
        served = "someone-else-9b" if self.c.behaviour == "other_model" else request.model
        return Completion(
            message=Message("assistant", content, tool_calls),
            finish_reason=FinishReason.TOOL_CALLS if tool_calls else FinishReason.STOP,
            raw_finish_reason="tool_calls" if tool_calls else "stop",
            usage=usage,
            model=served,
        )
