"""`run_task`: the library entry point. One task, in what `prepare_run` (agent/prepare.py) or the
caller made, to an end that is always recorded: the change committed on the workspace's branch,
run.json and steps.jsonl true, the outcome set where it is true. `ssw run`, `ssw bench` and
bench/perf are thin callers of it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from stepswitch import __version__
from stepswitch.agent.events import PREFLIGHT, Events, Progress, RecordWriter, RunUpdate, Sink
from stepswitch.agent.machine import GateRunner, StepMachine
from stepswitch.agent.preflight_beside import PreflightBeside
from stepswitch.agent.prepare import PreparedRun
from stepswitch.agent.prompts import TaskBrief
from stepswitch.agent.providers import ProviderFactory
from stepswitch.agent.session import Session
from stepswitch.agent.tier_memory import KIND_TAG, recall
from stepswitch.agent.tools.execute import execute_call
from stepswitch.agent.workers import is_scripted, is_simulated, worker_models
from stepswitch.agent.workspace.continued import Resume
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.agent.workspace.stops import Ending, run_ending
from stepswitch.agent.workspace.worktree import (
    Worktree,
    changed_paths,
    commit_all,
    diff_stats,
    diff_text,
    unsaved_paths,
)
from stepswitch.errors import HarnessError, Interrupted, RunStopped, SswError, UsageError
from stepswitch.ledger import Budget, BudgetExceeded, Ledger
from stepswitch.policy.model import Policy
from stepswitch.records.crash import crash_traceback
from stepswitch.records.folder import RecordNotWritten, RunFolder
from stepswitch.records.money import CostRange
from stepswitch.records.run import ChangedFile, Outcome, PricesRead, RunIds, RunRecord, Totals
from stepswitch.records.steps import Finish, GateRecord
from stepswitch.registry.presets import ModelSpec, Price, load_registry
from stepswitch.util.exit_codes import DONE, INTERRUPTED, NOT_DONE
from stepswitch.util.git_checkouts import checkout_tree
from stepswitch.util.git_objects import EMPTY_TREE
from stepswitch.util.proc import kill_live_groups
from stepswitch.wire.types import ToolCall


def policy_sha256(policy: Policy) -> str:
    """The hash of the policy's content (not its file's comments): same rules, same hash."""
    canonical = json.dumps(policy.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _relative(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix() or "."
        except ValueError:
            return path.name  # outside the repository: no machine path in the record
    return str(path)


def _policy_path(policy: Policy, root: Path | None) -> str:
    # A policy from --model has no file: its source says how it was built.
    return policy.source if policy.in_memory else _relative(Path(policy.source), root)


@dataclass(frozen=True)
class RunExtras:
    """What some callers add to a run: who watches it, tags for cost attribution, where an
    earlier run stopped (`--continue`), the prices read for it, and a checkout's uncommitted
    changes left out of it (`--allow-dirty`)."""

    sinks: Sequence[Sink] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    resume: Resume | None = None
    prices_read: Sequence[PricesRead] = ()  # prices read from model lists for this run
    allow_dirty: bool = False


def run_task(
    prepared: PreparedRun[GateRunner],
    *,
    task: str,
    policy: Policy,
    ledger: Ledger,
    folder: RunFolder,
    ids: RunIds,
    budgets: tuple[Budget, ...],
    providers: ProviderFactory,
    deadline: float,
    extras: RunExtras | None = None,
) -> RunRecord:
    if not task.strip():
        raise UsageError("the task is empty; pass --task TEXT or --task-file F")
    extras = extras or RunExtras()
    registry = prepared.registry if prepared.registry is not None else load_registry()
    models = worker_models(policy, registry)
    worktree = _worktree(prepared)
    events = Events(ids.run_id, [RecordWriter(folder), *extras.sinks])
    began = time.monotonic()
    record = _first_record(task, policy, models, prepared, worktree, ids, extras)
    if policy.escalation.memory and ids.bench_id is None:
        ladder, kind = policy.escalation.ladder, record.tags.get(KIND_TAG)
        record.tier_memory = recall(folder.root.parent, ids.run_id, ladder, kind, record.scripted)
    # The layout is listed first: the untouched tree, whatever a gate beside the plan writes.
    brief = _brief(task, prepared.workspace, extras.resume)
    beside = prepared.beside
    session = Session(
        ids=ids,
        policy=policy,
        models=models,
        tags=extras.tags,
        providers=providers,
        ledger=ledger,
        budgets=budgets,
        min_output_tokens=policy.limits.min_output_tokens,
        events=events,
        deadline=deadline,
        start_level=_start_level(record, extras.resume, policy),
        settle=partial(_settle, beside, record, events) if beside is not None else None,
    )
    read_diff = partial(_read_diff, worktree)
    machine = StepMachine(session, prepared.workspace, brief, prepared.gates, read_diff)
    # From its first record on, the run ends through the code below; once it ends (a signal,
    # an error, done), no signal interrupts saving its work and writing its record.
    with run_ending(f"saving the run's work (a commit on {worktree.branch})") as ending:
        if beside is not None:
            beside.start()  # its gates run while the plan's call is out
        message = _drive(machine, record, events, ending, prepared.gates.description)
        if beside is not None:
            beside.stop()  # a run that ended before the verdict: none of its gates goes on
            if beside.refusal is not None and prepared.repo_root is not None:
                # The gate's words name the worktree: no machine path in the record.
                where = f"{prepared.repo_root.resolve()}/"
                record.reason = (record.reason or "").replace(where, "")
        record.gates_verdict = machine.result.gates_verdict
        record.review_verdict = machine.result.review_verdict
        _save(record, worktree, _commit_message(record, message), prepared.repo_root)
        # The step the run ended under is written first: the totals are the records' sums.
        record.totals = _with_ledger(session.close(record.reason), ledger, ids.run_id)
        record.finished_at = datetime.now(UTC).isoformat(timespec="seconds")
        record.elapsed_s = round(time.monotonic() - began, 3)
        _finish(record, events, worktree)
        return record


def _worktree(prepared: PreparedRun[GateRunner]) -> Worktree:
    """The work tree the run commits from: the prepared one's git, or the checkout's own."""
    root = prepared.workspace.root
    tree = prepared.tree or checkout_tree(root)
    if tree is None or tree.prefix or tree.base_commit == EMPTY_TREE:
        raise UsageError(f"{root} is not the top of a git checkout with a commit")
    branch = tree.branch.removeprefix("refs/heads/")
    return Worktree(prepared.repo_root or root, root, branch, tree.base_commit, tree)


def _first_record(
    task: str,
    policy: Policy,
    models: Mapping[str, ModelSpec],
    prepared: PreparedRun[GateRunner],
    worktree: Worktree,
    ids: RunIds,
    extras: RunExtras,
) -> RunRecord:
    """run.json as the run starts: what it was asked, with what, from where."""
    repo_root = prepared.repo_root
    return RunRecord(
        ids=ids,
        task=task,
        branch=worktree.branch,
        worktree=_relative(worktree.path, repo_root),
        base_commit=worktree.base_commit,
        ssw_version=__version__,
        policy_path=_policy_path(policy, repo_root),
        policy_sha256=policy_sha256(policy),
        policy=policy.model_dump(mode="json"),
        policy_flags=policy.flags,
        policy_before_flags=policy.before_flags,
        prices={
            name: m.price.model_dump(mode="json") if isinstance(m.price, Price) else None
            for name, m in models.items()
        },
        prices_read=list(extras.prices_read),
        scripted=is_scripted(policy) or is_simulated(policy),
        simulated=is_simulated(policy),
        allow_dirty=extras.allow_dirty,
        continues=extras.resume.run_id if extras.resume else None,
        baseline_gates=[GateRecord.model_validate(g) for g in prepared.baseline],
        tags=dict(extras.tags),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _drive(
    machine: StepMachine, record: RunRecord, events: Events, ending: Ending, gates: str
) -> str:
    """Run the machine to its end, which sets the record's outcome; the commit message."""
    try:
        try:
            events.emit(RunUpdate(record))
            events.notice(gates)
            if record.tier_memory is not None:
                events.notice(f"tier memory: {record.tier_memory.why}")
            result = machine.run()
        finally:
            ending.begin()
        record.outcome, record.exit_code = "done", DONE
        record.reason = "the gates passed" if result.gates_verdict == "passed" else "no gates"
        return result.commit_message
    except RunStopped as exc:
        # A limit, the gates on every rung, an unreadable review: the run ends, nothing lost.
        _ended(record, exc.outcome, str(exc), max(NOT_DONE, exc.exit_code))
        if isinstance(exc, BudgetExceeded):
            record.budget_stop = exc.budget.scope
    except HarnessError as exc:
        _ended(record, "harness_error", str(exc), NOT_DONE)
        record.traceback = crash_traceback(exc)
    except SswError as exc:  # a provider that failed, a refused budget, a full disk
        _ended(record, "error", str(exc), max(NOT_DONE, exc.exit_code))
    except KeyboardInterrupt as exc:
        kill_live_groups()  # the run tool's or a gate's command must not outlive the run
        why = exc.signal_name if isinstance(exc, Interrupted) else "Ctrl-C"
        _ended(record, "interrupted", f"interrupted by {why}", INTERRUPTED)
    except Exception as exc:  # a bug in ssw: recorded as ours, never as the model's failure
        kill_live_groups()
        _ended(record, "harness_error", f"{type(exc).__name__}: {exc}", NOT_DONE)
        record.traceback = crash_traceback(exc)
    return ""


def _settle(beside: PreflightBeside, record: RunRecord, events: Events) -> None:
    """The pre-flight's verdict, waited for after the first reply: in the record, and on the
    run's screen; its refusal raised, which ends the run."""
    baseline = beside.verdict()
    record.baseline_gates = [GateRecord.model_validate(g) for g in baseline.records()]
    events.emit(Progress(PREFLIGHT, "pre-flight: the gates' verdict is in"))
    if beside.lines:
        events.notice("\n".join(beside.lines))


def _finish(record: RunRecord, events: Events, worktree: Worktree) -> None:
    """The run's last events: its end, then run.json in full."""
    try:
        events.emit(
            Finish(
                outcome=record.outcome,
                reason=record.reason,
                exit_code=record.exit_code or 0,
                commit=record.commit,
            )
        )
        events.emit(RunUpdate(record, final=True))
    except RecordNotWritten as exc:
        raise RecordNotWritten(f"{exc}; {_where(record, worktree)}") from exc


def _commit_message(record: RunRecord, summary: str) -> str:
    """The message of the run's commit: a done run's summary, else what it left unfinished
    and why; then the trailers that name the run."""
    if record.outcome != "done":
        task = record.task.strip()[:50]
        summary = f"ssw: unfinished ({record.outcome}): {task}\n\n{record.reason}"
    trailer = f"\n\nSsw-Run: {record.ids.run_id}" + (
        "\nSsw-Model: scripted" if record.scripted else ""
    )
    return summary.rstrip() + trailer


def _read_diff(worktree: Worktree) -> tuple[str, list[str]]:
    with worktree.git.steady():  # one listing of the tree for both
        return diff_text(worktree), changed_paths(worktree)


def _brief(task: str, workspace: Workspace, resume: Resume | None) -> TaskBrief:
    """What the first step is told: the task and the tree's layout; a continued run's, with
    what its earlier steps answered."""
    call = ToolCall("layout", "list_dir", "{}")
    layout = execute_call(workspace, call, frozenset({"list_dir"})).output
    if resume is None:
        return TaskBrief(task=task, layout=layout)
    brief = TaskBrief(task=f"{task}\n\n{resume.note}", layout=layout)
    for name, text in resume.brief.items():
        setattr(brief, name, text)
    return brief


def _start_level(record: RunRecord, resume: Resume | None, policy: Policy) -> int:
    """The rung the run starts on: where a continued run stopped, else tier memory's, else 0."""
    if resume is not None:
        return min(resume.level, len(policy.escalation.ladder) - 1)
    return record.tier_memory.level if record.tier_memory else 0


def _save(record: RunRecord, worktree: Worktree, message: str, repo_root: Path | None) -> None:
    """Commit what the work tree holds. When that fails (git failing, a full disk), the run
    ends as `error` saying so and where the work is, and the caller keeps the work tree."""
    try:
        made = commit_all(worktree, message)
        # Nothing new to commit: a continued run's branch may still hold the change it judged.
        head = made or worktree.git.head()
        record.commit = head if head != record.base_commit else None
    except Exception as exc:
        why = str(exc)
        if repo_root is not None:
            why = why.replace(f"{repo_root.resolve()}/", "")  # no machine path in the record
        outcome: Outcome = "error" if isinstance(exc, SswError | OSError) else "harness_error"
        reason = (
            f"{record.outcome}: {record.reason}; then its work could not be committed ({why}): "
            f"it stays in {record.worktree}"
        )
        _ended(record, outcome, reason, NOT_DONE)
        record.traceback = crash_traceback(exc) if outcome == "harness_error" else record.traceback
        return
    if record.commit is None:
        return  # the tree is the base commit's: no commit, no changed file
    try:
        stats = diff_stats(worktree.git, record.commit)
    except (SswError, OSError):
        stats = []  # committed all the same: the record goes without the line counts
    record.changed_files = [ChangedFile(path=p, added=a, deleted=d) for p, a, d in stats]


def _where(record: RunRecord, worktree: Worktree) -> str:
    """Where a run whose record could not be written left its work, in words."""
    if record.commit is None and unsaved_paths(worktree):
        return f"its work is not committed: it stays in {worktree.path}"
    if record.commit is None:
        return f"it changed nothing (branch {worktree.branch})"
    if not record.changed_files:
        return f"it changed nothing (branch {worktree.branch})"
    return f"its work is committed on branch {worktree.branch} at {record.commit[:12]}"


def _ended(record: RunRecord, outcome: Outcome, reason: str, exit_code: int) -> None:
    record.outcome = outcome
    record.reason = reason
    record.exit_code = exit_code


def _with_ledger(totals: Totals, ledger: Ledger, run_id: str) -> Totals:
    """The totals with every dollar the ledger holds for the run: a call in flight at the end."""
    try:
        spent = ledger.spend("run", run_id)
    except (SswError, OSError, sqlite3.Error):
        return totals  # the steps' account stands; the reports read the ledger again
    return totals.with_ledger(CostRange(low=spent.low, high=spent.high))
