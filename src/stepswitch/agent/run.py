"""`ssw run`: set up the worktree, the providers and the records, run the step machine, commit
the change on the run's branch, and write the bill. Exit 0 done, 1 not done, 2 bad input."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from stepswitch.agent.machine import StepMachine
from stepswitch.agent.prompts import TaskBrief
from stepswitch.agent.session import Session
from stepswitch.agent.tools.execute import execute_call
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.agent.workspace.worktree import (
    Worktree,
    changed_paths,
    commit_all,
    create_worktree,
    diff_text,
    remove_worktree,
)
from stepswitch.errors import RunStopped, SswError, UsageError
from stepswitch.fakes.loopback import LoopbackServer
from stepswitch.fakes.scripted import SCRIPTED_PROVIDER, load_script, start_scripted_server
from stepswitch.gates.config import protected_paths
from stepswitch.gates.detect import load_gates
from stepswitch.gates.suite import GateSuite, SuiteResult
from stepswitch.ledger import Budget, Ledger, open_ledger
from stepswitch.policy.model import Policy, load_policy
from stepswitch.records import RunFolder, RunRecord
from stepswitch.registry.presets import load_registry
from stepswitch.wire.types import ToolCall


@dataclass(frozen=True)
class RunOptions:
    repo: Path
    task: str
    policy_path: Path
    budget_usd: float | None = None
    max_steps: int | None = None
    script: Path | None = None  # replies for workers on the scripted provider
    ledger_path: Path | None = None  # None: $SSW_LEDGER, else <repo>/.ssw/ledger.sqlite
    tags: tuple[tuple[str, str], ...] = ()  # team, feature, customer...: for cost attribution


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def _with_overrides(policy: Policy, options: RunOptions) -> Policy:
    update: dict[str, object] = {}
    if options.budget_usd is not None:
        if not options.budget_usd > 0:
            raise UsageError(
                f"--budget-usd must be a positive number of dollars, not {options.budget_usd}"
            )
        update["budget_usd"] = options.budget_usd
    if options.max_steps is not None:
        if options.max_steps < 1:
            raise UsageError(f"--max-steps must be at least 1, not {options.max_steps}")
        update["max_steps"] = options.max_steps
    if not update:
        return policy
    limits = policy.limits.model_copy(update=update)
    copy = policy.model_copy(update={"limits": limits})
    copy._source = policy.source
    return copy


def _uses_scripted(policy: Policy) -> bool:
    return any(w.provider == SCRIPTED_PROVIDER for w in policy.workers.values())


def run_task(options: RunOptions, print_line: Callable[[str], None]) -> RunRecord:
    repo = options.repo.resolve()
    if not repo.is_dir():
        raise UsageError(f"{options.repo} is not a folder")
    if not options.task.strip():
        raise UsageError("the task is empty; pass --task TEXT or --task-file F")
    if not (repo / ".git").exists():
        raise UsageError(f"{options.repo} is not the top of a git repository; run `git init` there")
    policy = _with_overrides(load_policy(options.policy_path), options)
    registry = load_registry()
    run_id = new_run_id()
    folder = RunFolder(repo / ".ssw" / "runs" / run_id)
    with ExitStack() as cleanup:  # undone in reverse: worktree, session, ledger, scripted server
        server: LoopbackServer | None = None
        if _uses_scripted(policy):
            if options.script is None:
                raise UsageError("this policy uses the scripted provider: pass --script F.yaml")
            server, _ = start_scripted_server(load_script(options.script))
            cleanup.callback(server.stop)
        ledger = open_ledger(ledger_path(options, repo))
        cleanup.callback(ledger.close)
        _report_recovered(ledger, print_line)
        limit = policy.limits.budget_usd
        # Built before the worktree: a policy it refuses (unpriced model, no key) leaves nothing.
        session = Session(
            ledger=ledger,
            budgets=(Budget("task", run_id, limit),) if limit is not None else (),
            tags=dict(options.tags),
            run_id=run_id,
            policy=policy,
            registry=registry,
            folder=folder,
            deadline=time.monotonic() + policy.limits.wall_time_s,
            print_line=print_line,
            scripted_base_url=server.base_url if server else None,
        )
        cleanup.callback(session.close)
        worktree = create_worktree(repo, run_id)
        cleanup.callback(remove_worktree, worktree)
        return _run_in_worktree(options, worktree, session, folder, print_line)
    raise AssertionError("unreachable")  # ExitStack re-raises; mypy cannot see it


def ledger_path(options: RunOptions, repo: Path) -> Path:
    if options.ledger_path is not None:
        return options.ledger_path
    from_env = os.environ.get("SSW_LEDGER")
    return Path(from_env) if from_env else repo / ".ssw" / "ledger.sqlite"


def _report_recovered(ledger: Ledger, print_line: Callable[[str], None]) -> None:
    if ledger.recovered:
        high = sum(r.high_usd or 0.0 for r in ledger.recovered)
        print_line(
            f"ledger: {len(ledger.recovered)} call(s) left open by a process that ended mid-call "
            f"are now bounds (up to ${high:.4f} in all): see `ssw ledger`"
        )


def _run_in_worktree(
    options: RunOptions,
    worktree: Worktree,
    session: Session,
    folder: RunFolder,
    print_line: Callable[[str], None],
) -> RunRecord:
    secret_names = frozenset(s.api_key_env for s in session.registry.values() if s.api_key_env)
    gates = load_gates(worktree.path)  # read once, at the base commit: edits cannot move them
    ws = Workspace(worktree.path, protected=protected_paths(gates), secret_env_names=secret_names)
    record = RunRecord(
        run_id=session.run_id,
        repo=str(worktree.repo),
        branch=worktree.branch,
        worktree=str(worktree.path),
        task=options.task,
        policy=str(options.policy_path),
        scripted=session.is_scripted,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    folder.write_run(record)
    label = " — the model is SCRIPTED (replayed replies, no real model)" if record.scripted else ""
    print_line(f"ssw run {session.run_id}: branch {worktree.branch}{label}")
    if not gates.gates:
        print_line("  no gates configured or detected: only the review judges this change")
    else:
        print_line(f"  gates ({gates.source}): {', '.join(g.name for g in gates.gates)}")
    suite = GateSuite(gates, worktree.path, ws.command_env(), folder.logs)

    def run_gates(changed: list[str]) -> SuiteResult:
        return suite.run(changed, worktree.base_commit)

    def read_diff() -> tuple[str, list[str]]:
        return diff_text(worktree), changed_paths(worktree)

    layout = execute_call(ws, ToolCall("layout", "list_dir", "{}"), frozenset({"list_dir"}))
    brief = TaskBrief(task=options.task, layout=layout.output)
    machine = StepMachine(session, ws, brief, run_gates, read_diff)
    try:
        result = machine.run()
        record.outcome, record.exit_code = "done", 0
        message = result.commit_message
        record.reason = "the gates passed" if gates.gates else "no gates; review only"
    except SswError as exc:
        # A limit, the gates on every rung, or a provider that failed: the run ends, nothing lost.
        outcome = exc.outcome if isinstance(exc, RunStopped) else "error"
        record.outcome, record.reason = outcome, str(exc)  # type: ignore[assignment]
        record.exit_code = max(1, exc.exit_code)
        message = f"ssw: unfinished ({outcome}): {options.task.strip()[:50]}\n\n{exc}"
    trailer = f"\n\nSsw-Run: {session.run_id}" + (
        "\nSsw-Model: scripted" if record.scripted else ""
    )
    record.commit = commit_all(worktree, message.rstrip() + trailer)
    t = session.totals
    record.steps, record.escalations = t.steps, session.level
    record.gate_failures = machine.result.gate_failures
    record.model_output_failures = machine.result.model_output_failures
    record.prompt_tokens, record.cached_tokens = t.prompt_tokens, t.cached_tokens
    record.completion_tokens, record.cost_usd = t.completion_tokens, t.cost_usd
    record.cost_high_usd, record.tags = t.cost_high_usd, dict(session.tags)
    record.unpriced_steps = t.unpriced_steps
    record.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
    folder.write_run(record)
    for line in format_bill(record, t.by_worker):
        print_line(line)
    return record


def _dollars(low: float, high: float) -> str:
    """A range when lost usage leaves the cost uncertain: never one guessed number."""
    return f"${low:.4f}" if high <= low else f"${low:.4f}-${high:.4f}"


def format_bill(record: RunRecord, by_worker: dict[str, float]) -> list[str]:
    lines = [
        f"{record.outcome}: {record.reason}",
        f"bill: {_dollars(record.cost_usd, record.cost_high_usd)} over {record.steps} steps; "
        f"tokens in {record.prompt_tokens:,} ({record.cached_tokens:,} cached), "
        f"out {record.completion_tokens:,}"
        + (f"; {record.unpriced_steps} unpriced steps" if record.unpriced_steps else ""),
    ]
    lines += [f"  {name:<12} ${usd:.4f}" for name, usd in sorted(by_worker.items())]
    lines.append(
        f"change: branch {record.branch} at {record.commit[:12] if record.commit else '-'}"
    )
    if record.scripted:
        lines.append("note: every reply came from a script; this says nothing about model quality")
    return lines
