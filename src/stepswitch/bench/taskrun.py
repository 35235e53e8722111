"""One task run of a bench, as a worker runs it: a fresh copy of the task's repo committed as the
base, the same workspace setup and `run_task` as `ssw run`, then grading of the committed tree
in a folder the agent never saw, inside the same sandbox as the agent's commands. Its record
folder keeps run.json, steps.jsonl, the gates' logs, change.patch and grade.json (which says
what confined the grading); the copy itself is removed.

A run that called a model always ends as a row in the journal, whatever happened; one that
never did (stopped before its first call, or refused it for the bench's budget) is released
and may run again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from stepswitch.agent.prepare import prepare_run
from stepswitch.agent.run import RunExtras, run_task
from stepswitch.agent.workspace.stops import sigterm_interrupts
from stepswitch.bench import journal
from stepswitch.bench.contestants import Contestant, TaskRunPlace
from stepswitch.bench.gitops import change_patch, commit_base
from stepswitch.bench.grading_folder import TestVerdict, grade, write_grade
from stepswitch.bench.grading_layout import TreeRefused, copy_tree
from stepswitch.bench.plan import RunKey
from stepswitch.bench.readback import (
    SCRATCH_PREFIX,
    fill_from_steps,
    kept_calls,
    loaded_run,
    lost_row,
    scrubbed,
)
from stepswitch.bench.results import ResultRow
from stepswitch.bench.task import Task, load_task
from stepswitch.errors import Interrupted
from stepswitch.gates.config import OWN_FILE
from stepswitch.ledger import Budget, Ledger, open_ledger
from stepswitch.records.folder import LoadedRun, RunFolder
from stepswitch.records.run import RunIds, RunRecord
from stepswitch.records.steps import GateVerdicts
from stepswitch.registry.presets import load_registry
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.sandbox import Sandbox, choose_sandbox
from stepswitch.util.scratch import owned_scratch
from stepswitch.util.text import first_line


@dataclass(frozen=True)
class BenchContext:
    """What every task run of one bench shares (picklable: it crosses to worker processes)."""

    root: Path  # the bench folder, absolute
    budget_usd_total: float | None = None
    sandbox: str = "auto"
    network: bool = False

    @property
    def bench_id(self) -> str:
        return self.root.name

    @property
    def ledger_path(self) -> Path:
        return self.root / "ledger.sqlite"

    @property
    def journal(self) -> Path:
        return self.root / journal.JOURNAL

    def bench_budget(self) -> Budget | None:
        if self.budget_usd_total is None:
            return None
        return Budget("bench", self.bench_id, self.budget_usd_total)


@dataclass(frozen=True)
class TaskRunJob:
    context: BenchContext
    task_folder: Path
    suite: str
    contestant: Contestant
    attempt: int

    @property
    def key(self) -> RunKey:
        return RunKey(f"{self.suite}/{self.task_folder.name}", self.contestant.name, self.attempt)


@dataclass(frozen=True)
class TaskRunResult:
    key: RunKey
    row: ResultRow | None  # None: released, it never called a model and may run again
    why: str = ""  # why it was released
    budget_stop: bool = False  # the bench's budget refused one of its calls
    interrupted: bool = False  # Ctrl-C or SIGTERM reached it
    not_sent: bool = False  # its cap did not fit the bench's budget yet (bench.cluster)
    lost: bool = False  # released: lost with its worker, runs again on resume (bench.cluster)


# --- per process ---

_ledgers: dict[tuple[int, Path], Ledger] = {}


def ledger_for(path: Path) -> Ledger:
    """One open ledger per process and file (a connection must not cross fork)."""
    key = (os.getpid(), path)
    if key not in _ledgers:
        _ledgers[key] = open_ledger(path)
    return _ledgers[key]


def forget_ledger(path: Path) -> None:
    """Close this process's ledger for `path`: a process that serves many benches' runs (a
    cluster worker's) must not keep a connection per run."""
    ledger = _ledgers.pop((os.getpid(), path), None)
    if ledger is not None:
        ledger.close()


# --- the run ---


def _base_row(job: TaskRunJob, task: Task) -> ResultRow:
    key = job.key
    return ResultRow(
        task=task.name,
        suite=task.suite,
        contestant=job.contestant.name,
        contestant_kind=job.contestant.kind,
        attempt=job.attempt,
        outcome="harness_error",
        run_id=key.run_id(job.context.bench_id),
        folder=key.folder(),
    )


def _from_record(row: ResultRow, record: RunRecord, loaded: LoadedRun | None) -> None:
    t = record.totals
    row.run_outcome = record.outcome
    row.outcome, row.reason = record.outcome, record.reason
    row.dollars_low, row.dollars_high = t.cost.low, t.cost.high
    row.unpriced_steps = t.unpriced_steps
    row.tokens = t.prompt_tokens + t.completion_tokens
    row.cached_tokens = t.cached_tokens
    row.uncached_tokens = row.tokens - t.cached_tokens
    row.minutes = round((record.elapsed_s or 0.0) / 60, 4)
    row.escalations = t.escalations
    row.model_output_failures = t.model_output_failures
    if loaded is not None:
        fill_from_steps(row, loaded.model_steps)
    row.steps = t.steps
    if record.outcome == "error" and loaded is not None:
        answered = [s for s in loaded.model_steps if s.error is None]
        if not answered:  # the provider failed before any step: ours to fix, not the policy's
            row.outcome = "harness_error"
            row.reason = f"a provider error before any step: {record.reason}"


def _grade_into(
    row: ResultRow,
    task: Task,
    checkout: TreeGit,
    commit: str,
    scratch: Path,
    record_dir: Path,
    sandbox: Sandbox,
) -> None:
    """The hidden tests' verdict on the committed tree, in the sandbox the agent ran in. What
    the tree did to grading (a link out of it, a time limit passed, pytest ended before its
    report) is a failed run with its reason, the outcome the run's own; a verdict missing for
    ssw's reasons (grading crashed, the sandbox did not start) is a harness error (ADR 0015)."""
    began = time.monotonic()
    verdict: TestVerdict | None = None
    try:
        tree = scratch / "graded"
        checkout.check_out(commit, tree)  # read from the git folder the contestant never saw
        (scratch / "grading").mkdir()
        verdict = grade(task, tree, scratch / "grading", sandbox=sandbox)
    except TreeRefused as exc:
        row.reason = f"grading: {exc}"
    except Exception as exc:  # a crash is data: counted, never dropped
        row.outcome, row.reason = "harness_error", f"grading crashed: {type(exc).__name__}: {exc}"
    row.grading_s = round(time.monotonic() - began, 3)
    if verdict is None:
        return
    row.verdict = verdict.summary()
    fault = verdict.tree_fault()
    if fault is not None:
        row.reason = f"grading: {fault}"
    elif not verdict.report:  # the command or the sandbox did not start
        tail = first_line(verdict.output[-400:]) if verdict.output else ""
        row.outcome = "harness_error"
        row.reason = f"grading gave no verdict: {verdict.summary()}" + (f": {tail}" if tail else "")
    row.passed = verdict.passed and row.outcome != "harness_error"
    write_grade(record_dir, verdict)


def _write_task_gates(task: Task, checkout: Path) -> None:
    """task.toml's [gates] become the copy's .stepswitch.toml, part of the base commit."""
    if task.spec.gates is not None:
        text = tomli_w.dumps({"gates": task.spec.gates})
        (checkout / OWN_FILE).write_text(text, encoding="utf-8")


def _budgets(job: TaskRunJob, run_id: str, limit: float | None) -> tuple[Budget, ...]:
    bench = job.context.bench_budget()
    own = Budget("run", run_id, limit) if limit is not None else None
    return tuple(b for b in (bench, own) if b is not None)


@dataclass
class _Clock:
    """When each part of a task run began (time.monotonic()), for its row's timings."""

    began: float
    set_up: float = 0.0  # the copy, its base commit and the providers done: prepare_run starts
    preflight: float = 0.0  # prepared (the gates on the untouched tree done): run_task starts
    ran: float = 0.0  # run_task done

    def timings(self, gates_s: float, grading_s: float) -> dict[str, float]:
        timings = {
            "setup_s": self.set_up - self.began,  # the copy, its base commit, the providers
            "preflight_s": self.preflight - self.set_up,  # prepare_run: its pre-flight
            "agent_s": self.ran - self.preflight,  # run_task
            "gates_s": gates_s,  # inside run_task
            "grading_s": grading_s,
            "wall_s": time.monotonic() - self.began,
        }
        return {k: round(v, 3) for k, v in timings.items()}


def _run(job: TaskRunJob, task: Task, row: ResultRow, scratch: Path) -> TaskRunResult:
    ctx, contestant = job.context, job.contestant
    clock = _Clock(time.monotonic())
    checkout, copy, home = _copy(task, scratch)
    policy = contestant.load_policy()
    registry = load_registry()
    folder = RunFolder(ctx.root / job.key.folder())
    ledger = ledger_for(ctx.ledger_path)
    sandbox = choose_sandbox(ctx.sandbox)  # the agent's commands, the gates and grading
    with ExitStack() as stack:
        place = TaskRunPlace(task, checkout, scratch, registry, stack, attempt=job.attempt)
        providers = contestant.providers(place)
        clock.set_up = time.monotonic()
        prepared = prepare_run(
            checkout,
            repo=checkout,
            tree=copy,
            sandbox=sandbox,
            home=home,
            registry=registry,
            cleanup=stack,
            log_dir=folder.logs,
            network=ctx.network,
        )
        wall = min(policy.limits.wall_time_s, task.spec.limits.task_timeout_s)
        clock.preflight = time.monotonic()
        record = run_task(
            prepared,
            task=task.brief,  # the instruction, and the visible tests the start fails
            policy=policy,
            ledger=ledger,
            folder=folder,
            ids=RunIds(
                run_id=row.run_id,
                task_id=task.name,  # the task, across contestants and attempts
                bench_id=ctx.bench_id,
                contestant=contestant.name,
                attempt=job.attempt,
            ),
            budgets=_budgets(job, row.run_id, policy.limits.budget_usd),
            providers=providers,
            deadline=time.monotonic() + wall,
            extras=RunExtras(tags=_tags(job)),
        )
    clock.ran = time.monotonic()
    return _judged(job, task, row, record, copy, scratch, sandbox, clock)


def _copy(task: Task, scratch: Path) -> tuple[Path, TreeGit, Path]:
    """A fresh copy of the task's repo, its gates written in, committed as the base: the copy,
    its git (beside it, out of the sandbox's view) and the commands' HOME (with tmp/)."""
    checkout, home = scratch / "repo", scratch / "home"
    copy_tree(task.repo, checkout)
    _write_task_gates(task, checkout)
    (home / "tmp").mkdir(parents=True)
    return checkout, commit_base(checkout, scratch / "git"), home


def _tags(job: TaskRunJob) -> dict[str, str]:
    contestant = job.contestant
    return {"bench": job.context.bench_id, "contestant": contestant.name, "kind": contestant.kind}


def _judged(
    job: TaskRunJob,
    task: Task,
    row: ResultRow,
    record: RunRecord,
    copy: TreeGit,
    scratch: Path,
    sandbox: Sandbox,
    clock: _Clock,
) -> TaskRunResult:
    """The run's row: released when it kept no call and a stop came first, else its record's
    figures, its change.patch and the hidden tests' verdict on its commit, journalled."""
    ctx, kind = job.context, job.contestant.kind
    record_dir = ctx.root / job.key.folder()
    budget_stop = record.budget_stop == "bench"
    interrupted = record.outcome == "interrupted"
    kept = kept_calls(ledger_for(ctx.ledger_path), row.run_id, record_dir, kind)
    if (interrupted or budget_stop) and not kept:
        why = "the bench's budget refused its first call" if budget_stop else record.reason
        return _release(job, why, budget_stop=budget_stop, interrupted=interrupted)
    loaded = loaded_run(record_dir)
    _from_record(row, record, loaded)
    base = copy.base_commit
    patch = change_patch(copy, base, record.commit) if record.commit else ""  # no change: empty
    (record_dir / "change.patch").write_text(patch, encoding="utf-8", errors="surrogateescape")
    if interrupted:
        row.reason = f"interrupted: {record.reason}; kept as a failure, not run again"
    elif row.outcome != "harness_error":
        # A run that changed nothing has no commit: its tree is the base's, graded as such
        # (null's runs check this way that the hidden tests fail on the untouched start).
        _grade_into(row, task, copy, record.commit or base, scratch, record_dir, sandbox)
    gates = sum(g.duration_s for e in (loaded.of(GateVerdicts) if loaded else []) for g in e.gates)
    row.timings = clock.timings(gates, row.grading_s)
    _finish(ctx, row)
    return TaskRunResult(job.key, row, budget_stop=budget_stop, interrupted=interrupted)


def _release(
    job: TaskRunJob, why: str, *, budget_stop: bool = False, interrupted: bool = False
) -> TaskRunResult:
    journal.append(job.context.journal, "released", job.key, why=why)
    shutil.rmtree(job.context.root / job.key.folder(), ignore_errors=True)
    return TaskRunResult(job.key, None, why, budget_stop=budget_stop, interrupted=interrupted)


def _finish(ctx: BenchContext, row: ResultRow) -> None:
    journal.finish(ctx.journal, scrubbed(row, ctx.root))


def run_one(job: TaskRunJob) -> TaskRunResult:
    """Run, grade and journal one task run. Never raises for a problem of the run: that is a
    row (harness_error when it is ours). Released runs come back with `row=None`."""
    ctx, key, kind = job.context, job.key, job.contestant.kind
    record_dir = ctx.root / key.folder()
    shutil.rmtree(record_dir, ignore_errors=True)  # what a released or killed try left
    run_id = key.run_id(ctx.bench_id)
    with contextlib.ExitStack() as stack:
        # Made first, its owner lock held: the dashboard (site/liveness.py) knows from `scratch`
        # whether the process of a run the journal calls started still lives. Its name only, in
        # the temporary folder: the journal is committed with the bench, and names no machine path.
        scratch = stack.enter_context(owned_scratch(SCRATCH_PREFIX))
        journal.append(
            ctx.journal, "started", key, run_id=run_id, pid=os.getpid(), scratch=scratch.name
        )
        stack.enter_context(sigterm_interrupts())
        try:
            task = load_task(job.task_folder, job.suite)
            return _run(job, task, _base_row(job, task), scratch)
        except KeyboardInterrupt as exc:  # outside run_task: the copy, the setup, grading
            why = exc.signal_name if isinstance(exc, Interrupted) else "Ctrl-C"
            ledger = ledger_for(ctx.ledger_path)
            if not kept_calls(ledger, run_id, record_dir, kind):
                return _release(job, f"interrupted by {why}", interrupted=True)
            reason = f"interrupted by {why}; kept as a failure, not run again"
            row = lost_row(
                key, kind, ctx.root, ctx.bench_id, ledger, outcome="interrupted", reason=reason
            )
            _finish(ctx, row)
            return TaskRunResult(key, row, interrupted=True)
        except Exception as exc:  # the task could not be set up, or ssw broke: counted
            reason = f"{type(exc).__name__}: {exc}"
            ledger = ledger_for(ctx.ledger_path)
            row = lost_row(
                key,
                kind,
                ctx.root,
                ctx.bench_id,
                ledger,
                outcome="harness_error",
                reason=reason,
            )
            _finish(ctx, row)
            return TaskRunResult(key, row)
