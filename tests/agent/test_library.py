"""run_task as a library: a caller's own workspace, provider factory, gate runner and sinks,
with no HTTP, no CLI and no monkeypatching; and the ends a run can reach, each recorded true."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from stepswitch.agent.events import Event, RunUpdate
from stepswitch.agent.prepare import PreparedRun
from stepswitch.agent.run import RunExtras, run_task
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.errors import UsageError
from stepswitch.gates.runner import GateResult
from stepswitch.gates.suite import SuiteResult
from stepswitch.ledger import open_ledger
from stepswitch.policy.model import WorkerConfig, validate_policy, with_overrides
from stepswitch.records.folder import RunFolder, load_run
from stepswitch.records.run import RunIds, RunRecord
from stepswitch.records.steps import Escalation, Finish
from stepswitch.wire.types import (
    Attempt,
    CallHooks,
    Completion,
    FinishReason,
    Message,
    ReasoningState,
    Request,
    ToolCall,
    Usage,
)
from tests.harness.repo import git, sample_repo
from tests.harness.task import BUG_LINE, DEFAULT_POLICY, FIX_LINE, make_policy

Reply = Callable[[Request], Completion] | dict[str, Any]


def answer(tool: str | None = None, *, content: str = "", **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments, "content": content}


def done(summary: str = "ok") -> dict[str, Any]:
    return answer("done", summary=summary)


def verdict(value: str) -> dict[str, Any]:
    return answer(content=json.dumps({"verdict": value, "reasons": "because"}))


@dataclass
class InProcessProvider:
    """A Provider that answers from a list, in process: each reply is a dict (tool call or
    content) or a function of the request (to raise, or to look at what was sent)."""

    replies: list[Reply]
    requests: list[tuple[str, Request]] = field(default_factory=list)

    def factory(self, name: str, worker: WorkerConfig) -> InProcessProvider.Bound:
        return InProcessProvider.Bound(self, name)

    @dataclass
    class Bound:
        owner: InProcessProvider
        worker: str

        def complete(
            self,
            request: Request,
            *,
            deadline: float,
            timeout: float | None = None,
            hooks: CallHooks | None = None,
        ) -> Completion:
            owner = self.owner
            owner.requests.append((self.worker, request))
            if hooks and hooks.before_attempt:
                hooks.before_attempt(1, 100)
            reply = owner.replies.pop(0)
            completion = reply(request) if callable(reply) else _completion(reply, request)
            if hooks and hooks.after_attempt:
                hooks.after_attempt(Attempt(1, 200, None, 0.0, None, completion))
            return completion


def _completion(reply: dict[str, Any], request: Request) -> Completion:
    calls: tuple[ToolCall, ...] = ()
    if reply["tool"]:
        calls = (ToolCall(f"c{id(reply)}", reply["tool"], json.dumps(reply["arguments"])),)
    return Completion(
        message=Message("assistant", reply["content"], calls),
        finish_reason=FinishReason.TOOL_CALLS if calls else FinishReason.STOP,
        raw_finish_reason="tool_calls" if calls else "stop",
        usage=Usage(prompt_tokens=100, completion_tokens=10),
        model=request.model + "-served",
    )


@dataclass
class CountingGates:
    """A gate runner that fails its first `fail` runs, then passes; it sees what changed."""

    fail: int = 0
    seen: list[list[str]] = field(default_factory=list)
    raise_on: int | None = None  # run number (1-based) on which the harness itself breaks

    @property
    def names(self) -> tuple[str, ...]:
        return ("check",)

    @property
    def description(self) -> str:
        return "  gates (injected): check"

    def before_edit(self) -> None:
        pass

    def run(self, changed: list[str]) -> SuiteResult:
        self.seen.append(list(changed))
        if self.raise_on == len(self.seen):
            raise RuntimeError("the gate runner itself broke")
        passed = len(self.seen) > self.fail
        report = "check: passed" if passed else f"check: failed (run {len(self.seen)})"
        return SuiteResult((GateResult("check", passed, 0.01, report, report),))


@dataclass
class Collected:
    events: list[Event] = field(default_factory=list)

    def on_event(self, event: Event) -> None:
        self.events.append(event)


def _policy(**sections: Any) -> Any:
    data = make_policy(**sections)
    return validate_policy(data, "test-policy.toml")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return sample_repo(tmp_path / "repo", "mean_bug")


def library_run(
    tmp_path: Path,
    checkout: Path,
    replies: list[Reply],
    *,
    gates: CountingGates | None = None,
    policy: Any = None,
) -> tuple[RunRecord, InProcessProvider, CountingGates, Collected]:
    provider = InProcessProvider(list(replies))
    gates = gates or CountingGates()
    sink = Collected()
    with open_ledger(tmp_path / "ledger.sqlite") as ledger:
        record = run_task(
            PreparedRun(Workspace(checkout), gates),
            task="calc.ops.mean divides by one value too many; fix it.",
            policy=policy or _policy(),
            ledger=ledger,
            folder=RunFolder(tmp_path / "records"),
            ids=RunIds(run_id="r1", task_id="t1", bench_id="b1", contestant="ladder", attempt=2),
            budgets=(),
            providers=provider.factory,
            deadline=time.monotonic() + 120,
            extras=RunExtras(sinks=[sink]),
        )
    return record, provider, gates, sink


EXPLORE = [done("plan"), done("calc/ops.py"), done("notes"), done("observed")]
FIX = [answer("edit", path="calc/ops.py", old=BUG_LINE, new=FIX_LINE), done("fixed")]
FINISH = [verdict("approve"), verdict("approve"), done("Fix mean\n\nDivide by the count.")]


def test_a_run_through_the_library_uses_the_injected_provider_gates_and_sinks(
    tmp_path: Path, checkout: Path
):
    record, provider, gates, sink = library_run(tmp_path, checkout, [*EXPLORE, *FIX, *FINISH])

    assert (record.outcome, record.gates_verdict, record.review_verdict) == (
        "done",
        "passed",
        "approve",
    )
    assert gates.seen == [["calc/ops.py"]]
    assert len(provider.requests) == 9 and not provider.replies
    assert (record.ids.bench_id, record.ids.contestant, record.ids.attempt) == ("b1", "ladder", 2)
    assert record.worktree == str(checkout)  # no repo_root given: the path as the caller named it
    assert record.base_commit == git(checkout, "rev-parse", "HEAD~1").strip()
    assert [(c.path, c.added, c.deleted) for c in record.changed_files] == [("calc/ops.py", 1, 1)]
    assert record.policy["escalation"]["ladder"] == ["mid", "large"] and record.policy_sha256
    assert record.elapsed_s is not None and record.ssw_version
    loaded = load_run(tmp_path / "records")
    assert loaded.run == record
    steps = loaded.model_steps
    assert [s.served_model for s in steps][:1] == ["scripted-large-served"]
    assert steps[-1].text == "" and steps[-2].text.startswith('{"verdict"')
    kinds = [type(e).__name__ for e in sink.events]
    assert kinds[0] == "RunUpdate" and kinds[-2:] == ["Finish", "RunUpdate"]


def test_the_next_rung_sees_every_gate_report_not_only_the_latest(tmp_path: Path, checkout: Path):
    seen: list[str] = []

    def edit_after_looking(request: Request) -> Completion:
        seen.append(request.messages[1].content)
        return _completion(done("tried again"), request)

    replies: list[Reply] = [
        *EXPLORE,
        answer("edit", path="calc/ops.py", old="+ 1)", new="+ 2)"),  # a change, for the gates
        done("edit 1"),
        done("triage 1"),
        done("edit 2"),
        done("triage 2"),
        edit_after_looking,  # rung 1 takes over here, after two failures
        *FINISH,
    ]
    record, _, _, sink = library_run(tmp_path, checkout, replies, gates=CountingGates(fail=2))

    assert record.outcome == "done", record.reason
    [context] = seen
    assert "check: failed (run 1)" in context and "check: failed (run 2)" in context
    assert context.index("check: failed (run 1)") < context.index("check: failed (run 2)")
    [escalation] = [e for e in sink.events if isinstance(e, Escalation)]
    assert (escalation.to_level, escalation.to_worker) == (1, "large")


def test_the_last_rung_out_of_steps_ends_the_run_as_a_limit(tmp_path: Path, checkout: Path):
    policy = _policy(limits={"max_steps": 40, "steps_per_rung": 2})
    # plan (large), navigate and read (small) are not the rung's; its run and edit are: the
    # edit step reads until each rung's two steps are spent.
    looking = answer("read", path="calc/ops.py")
    replies = [done("plan"), done("files"), done("notes"), done("ran"), *[looking] * 20]
    record, _, _, _ = library_run(
        tmp_path, checkout, replies, policy=policy, gates=CountingGates(fail=99)
    )

    assert record.outcome == "limit", record.reason
    assert "used its 2 steps (edit, run and triage calls on it), and no rung" in record.reason
    assert record.totals.gate_failures == 0  # nothing to do with the gates


def test_an_unparsed_review_is_counted_and_never_approves(tmp_path: Path, checkout: Path):
    junk = answer(content="LGTM!")
    replies = [*EXPLORE, *FIX, junk, junk, verdict("approve"), done("Fix mean")]
    record, _, _, _ = library_run(tmp_path, checkout, replies)

    assert (record.outcome, record.exit_code) == ("error", 1)
    assert record.review_verdict == "unparsed"
    assert "reviewer gave no verdict" in record.reason
    assert record.totals.model_output_failures == 2
    assert git(checkout, "show", "HEAD:calc/ops.py").count(FIX_LINE) == 1  # kept, unreviewed


def test_a_bug_in_the_gate_runner_is_a_harness_error_not_a_failing_gate(
    tmp_path: Path, checkout: Path
):
    replies = [*EXPLORE, *FIX]
    record, provider, _, _ = library_run(
        tmp_path, checkout, replies, gates=CountingGates(raise_on=1)
    )

    assert (record.outcome, record.exit_code) == ("harness_error", 1)
    assert record.reason == "RuntimeError: the gate runner itself broke"
    assert not provider.replies  # no model was paid to "fix" it
    assert FIX_LINE in git(checkout, "show", "HEAD:calc/ops.py")  # the edit is committed


def test_ctrl_c_mid_edit_commits_the_edit_and_records_interrupted(tmp_path: Path, checkout: Path):
    def interrupt(request: Request) -> Completion:
        raise KeyboardInterrupt

    replies: list[Reply] = [*EXPLORE, FIX[0], interrupt]
    record, _, _, sink = library_run(tmp_path, checkout, replies)

    assert (record.outcome, record.exit_code, record.reason) == (
        "interrupted",
        130,
        "interrupted by Ctrl-C",
    )
    assert FIX_LINE in git(checkout, "show", "HEAD:calc/ops.py")
    assert git(checkout, "status", "--porcelain") == ""
    saved = load_run(tmp_path / "records")
    assert saved.run.outcome == "interrupted"
    assert isinstance(saved.steps[-1], Finish) and saved.steps[-1].outcome == "interrupted"
    final = [e for e in sink.events if isinstance(e, RunUpdate) and e.final]
    assert final and final[0].run.commit == git(checkout, "rev-parse", "HEAD").strip()


def test_cli_overrides_are_validated_like_the_policy_file():
    policy = _policy()
    with pytest.raises(UsageError, match=r"--max-steps 0: "):
        with_overrides(policy, max_steps=0)
    with pytest.raises(UsageError, match=r"--max-steps 2\.5: "):
        with_overrides(policy, max_steps=2.5)
    with pytest.raises(UsageError, match=r"--budget-usd inf: "):
        with_overrides(policy, budget_usd=float("inf"))
    lowered = with_overrides(policy, max_steps=3)
    assert (lowered.limits.max_steps, lowered.limits.steps_per_rung) == (3, 3)
    assert lowered.source == policy.source


def test_an_empty_task_is_refused_before_anything_is_recorded(tmp_path: Path, checkout: Path):
    with open_ledger(tmp_path / "ledger.sqlite") as ledger, pytest.raises(UsageError):
        run_task(
            PreparedRun(Workspace(checkout), CountingGates()),
            task="  ",
            policy=_policy(),
            ledger=ledger,
            folder=RunFolder(tmp_path / "records"),
            ids=RunIds(run_id="r", task_id="t"),
            budgets=(),
            providers=InProcessProvider([]).factory,
            deadline=time.monotonic() + 10,
        )
    assert not (tmp_path / "records").exists()


# --- a real `ssw run` process, stopped by SIGTERM mid-task ---


def _wait_for(condition: Callable[[], bool], limit_s: float = 60) -> None:
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("the condition never held")
        time.sleep(0.05)


@pytest.mark.slow
def test_sigterm_mid_run_commits_the_edit_and_exits_130(tmp_path: Path, checkout: Path):
    import tomli_w
    import yaml

    policy = tmp_path / "policy.toml"
    policy.write_text(tomli_w.dumps(DEFAULT_POLICY))
    edit = {"path": "calc/ops.py", "old": BUG_LINE, "new": FIX_LINE}
    replies = [
        *[{"tool_calls": [{"name": "done", "arguments": {"summary": s}}]} for s in "abcd"],
        {"tool_calls": [{"name": "edit", "arguments": edit}]},
        {"tool_calls": [{"name": "done", "arguments": {"summary": "x"}}], "delay_s": 300},
    ]
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump({"replies": replies}))
    args = ["run", checkout, "--policy", policy, "--script", script, "--task", "fix mean"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "stepswitch", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    runs = checkout / ".ssw" / "runs"

    def edited() -> bool:
        steps = list(runs.glob("*/steps.jsonl"))
        return bool(steps) and '"name":"edit"' in steps[0].read_text()

    try:
        _wait_for(edited)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    [folder] = list(runs.iterdir())
    run = load_run(folder).run
    assert (run.outcome, run.reason) == ("interrupted", "interrupted by SIGTERM")
    assert FIX_LINE in git(checkout, "show", f"{run.branch}:calc/ops.py")
    assert not (checkout / run.worktree).exists()


def test_reasoning_state_goes_back_in_the_tool_loop_and_never_into_a_record(
    tmp_path: Path, checkout: Path
):
    canary = "sig-CANARY-opaque-reasoning-7f3a"
    state = ReasoningState.of("messages", "scripted-large", [{"signature": canary}])

    def plan_with_state(request: Request) -> Completion:
        completion = _completion(answer("list_dir"), request)
        message = dataclasses.replace(completion.message, reasoning_state=state)
        return dataclasses.replace(completion, message=message)

    record, provider, _, _ = library_run(
        tmp_path, checkout, [plan_with_state, *EXPLORE, *FIX, *FINISH]
    )

    assert record.outcome == "done"
    second = provider.requests[1][1]  # the plan step's second turn
    assert [m.reasoning_state for m in second.messages if m.reasoning_state] == [state]
    for path in (tmp_path / "records").rglob("*"):
        if path.is_file():
            assert canary not in path.read_text(encoding="utf-8", errors="replace"), path
    assert canary.encode() not in (tmp_path / "ledger.sqlite").read_bytes()
