"""`run_bench`: every task run of a bench, interleaved, through one executor, into one folder.

    bench/runs/<id>/
      run.json        the bench (record.py): command, commit, versions, policies, prices, sessions
      journal.jsonl   one line per task run started / finished / released (journal.py)
      results.csv     one row per finished task run (results.py)
      summary.json    the figures (summary.py), written when a session ends
      ledger.sqlite   the bench's one ledger: every call of every worker (not committed)
      tasks/<suite>/<task>/<contestant>/<attempt>/   run.json, steps.jsonl, logs/, change.patch,
                      grade.json

Running the same bench again resumes it: finished runs are kept; a run that started, called a
model and did not finish is recorded as a failure ("interrupted: ...") and never run again; one
that never called a model runs again. The budget (`Budget("bench", id, total)`) is the ledger's:
every attempt of every worker process is admitted against it before it leaves.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from stepswitch.bench import journal
from stepswitch.bench.contestants import Contestant
from stepswitch.bench.executor import local_executor
from stepswitch.bench.files import RESULTS_FILE, SUMMARY_FILE
from stepswitch.bench.folder_lock import LOCK_FILE, hold_bench_folder
from stepswitch.bench.plan import RunKey, plan_runs
from stepswitch.bench.readback import kept_calls, lost_row, mark_lost_record, scrubbed
from stepswitch.bench.record import (
    RUN_FILE,
    BenchRecord,
    Session,
    open_record,
    source_commit,
    write_json,
)
from stepswitch.bench.results import ContestantKind, ResultRow, write_csv
from stepswitch.bench.stats import RESAMPLES
from stepswitch.bench.summary import summarize
from stepswitch.bench.task import Task
from stepswitch.bench.task_needs import missing_requirements, missing_tools
from stepswitch.bench.taskrun import BenchContext, TaskRunJob, TaskRunResult, ledger_for, run_one
from stepswitch.errors import UsageError

STOP_WAIT_S = 120.0  # how long a Ctrl-C waits for the runs it stopped to record themselves
GITIGNORE = (
    "# the bench's ledger: every call is in the task runs' records too\nledger.sqlite*\n"
    f"# who is writing the folder (bench/folder_lock.py)\n{LOCK_FILE}\n"
)

ExecutorFactory = Callable[[int], Executor]


class Progress(Protocol):
    def start(self, planned: int, done: Sequence[ResultRow]) -> None: ...

    def row(self, row: ResultRow) -> None: ...

    def notice(self, text: str) -> None: ...

    def close(self) -> None: ...


class NoProgress:
    def start(self, planned: int, done: Sequence[ResultRow]) -> None:
        pass

    def row(self, row: ResultRow) -> None:
        pass

    def notice(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class BenchSpec:
    root: Path  # the bench folder; its name is the bench id
    tasks: Sequence[Task]
    contestants: Sequence[Contestant]
    runs_per_task: int = 1
    budget_usd_total: float | None = None
    workers: int = 1
    sandbox: str = "auto"
    command: Sequence[str] = ()
    claims: Sequence[str] = ()  # registered claims the bench is run for (`--claim ID`)


@dataclass
class BenchResult:
    root: Path
    status: str  # complete | interrupted | budget_stop | failed | lost
    rows: list[ResultRow]
    planned: int
    summary: dict[str, Any]
    why: str = ""  # for `failed`: what broke

    @property
    def exit_code(self) -> int:
        return {"complete": 0, "budget_stop": 1, "failed": 1, "lost": 1}.get(self.status, 130)


def _not_sent(future: Future[TaskRunResult]) -> bool:
    return future.done() and future.exception() is None and future.result().not_sent


class _Bench:
    """One session of a bench: resume what the journal says, run the rest, write the files."""

    def __init__(self, spec: BenchSpec, executor: ExecutorFactory, progress: Progress) -> None:
        self.spec = spec
        self.root = spec.root.resolve()
        self.make_executor = executor
        self.progress = progress
        self.ctx = BenchContext(self.root, spec.budget_usd_total, spec.sandbox)
        self.kinds = {c.name: c.kind for c in spec.contestants}
        by_name = {c.name: c for c in spec.contestants}
        self.plan = plan_runs([t.name for t in spec.tasks], list(by_name), spec.runs_per_task)
        tasks = {t.name: t for t in spec.tasks}
        self.jobs = {
            key: TaskRunJob(
                self.ctx,
                tasks[key.task].folder,
                tasks[key.task].suite,
                by_name[key.contestant],
                key.attempt,
            )
            for key in self.plan
        }
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            ignore.write_text(GITIGNORE, encoding="utf-8")
        self.ledger = ledger_for(self.ctx.ledger_path)
        self.ran = 0
        self.lost = 0  # runs lost with their workers and released to run again
        self.failure = ""  # why the worker pool failed, when it did

    # --- resume ---

    def settle_open_runs(self) -> None:
        """Runs a previous session started and never finished: a failure if they called a
        model (the ledger or their steps say so), else released to run again."""
        state = journal.read(self.ctx.journal)
        lost = released = 0
        for key in sorted(state.open_runs):
            folder = self.root / key.folder()
            kind = self.kinds.get(key.contestant, "policy")
            calls = kept_calls(self.ledger, key.run_id(self.ctx.bench_id), folder, kind)
            if calls:
                reason = (
                    f"interrupted: the bench ended during this run (killed, crashed or stopped) "
                    f"after {calls} model call(s); kept as a failure, not run again"
                )
                row = self._lost_row(key, kind, "interrupted", reason)
                mark_lost_record(folder, row)
                journal.finish(self.ctx.journal, scrubbed(row, self.root))
                lost += 1
            else:
                why = "the bench ended before its first model call; it runs again"
                journal.append(self.ctx.journal, "released", key, why=why)
                released += 1
        if lost or released:
            self.progress.notice(
                f"resuming: {lost} task run(s) the last session lost after a model call are "
                f"failures; {released} that never called a model run again"
            )

    def _lost_row(self, key: RunKey, kind: ContestantKind, outcome: str, reason: str) -> ResultRow:
        """The failure row of a run this bench lost, from its record folder and the ledger."""
        return lost_row(
            key, kind, self.root, self.ctx.bench_id, self.ledger, outcome=outcome, reason=reason
        )

    # --- running ---

    def budget_left(self) -> bool:
        budget = self.ctx.bench_budget()
        if budget is None:
            return True
        return self.ledger.spend("bench", budget.key).high < budget.limit_usd

    def _result(self, future: Future[TaskRunResult], key: RunKey) -> TaskRunResult:
        try:
            return future.result()
        except Exception as exc:  # the worker died, or could not take the job
            reason = f"the task run's worker failed: {type(exc).__name__}: {exc}"
            run_id = key.run_id(self.ctx.bench_id)
            kind = self.kinds[key.contestant]
            if not kept_calls(self.ledger, run_id, self.root / key.folder(), kind):
                journal.append(self.ctx.journal, "released", key, why=reason)
                self.failure = reason
                return TaskRunResult(key, None, reason)
            row = self._lost_row(key, kind, "harness_error", reason)
            journal.finish(self.ctx.journal, scrubbed(row, self.root))  # counted, never re-run
            return TaskRunResult(key, row)

    def _take(self, result: TaskRunResult) -> str | None:
        if result.row is not None:
            self.ran += 1
            self.progress.row(result.row)
        if result.budget_stop:
            return "budget_stop"
        if result.interrupted:
            return "interrupted"
        if result.row is None and result.lost:
            self.lost += 1  # the rest go on; resume runs it again
            self.progress.notice(f"{result.key.folder()}: {result.why}")
            return None
        if result.row is None:
            return "failed"  # the worker failed before the run could call a model
        return None

    def _stop_running(self, running: dict[Future[TaskRunResult], RunKey], pool: Executor) -> None:
        """SIGTERM to the worker processes of the runs still going: each records itself. An
        executor of other machines' runs (bench.cluster) is asked to stop them."""
        stop_runs = getattr(pool, "stop_runs", None)
        if callable(stop_runs):
            stop_runs()
        state = journal.read(self.ctx.journal)
        for key in running.values():
            pid = state.open_runs.get(key, {}).get("pid")
            if isinstance(pid, int) and pid != os.getpid():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)

    def run(self) -> str:
        state = journal.read(self.ctx.journal)
        pending = deque(k for k in self.plan if k not in state.finished)
        workers = max(1, self.spec.workers)
        pool = self.make_executor(workers)
        running: dict[Future[TaskRunResult], RunKey] = {}
        stop: str | None = None
        try:
            while running or (pending and stop is None):
                while pending and stop is None and len(running) < workers:
                    if not self.budget_left():
                        stop = "budget_stop"
                        break
                    key = pending.popleft()
                    try:
                        future = pool.submit(run_one, self.jobs[key])
                    except BrokenProcessPool:  # a worker died between runs: a new pool
                        pool = self.make_executor(workers)
                        future = pool.submit(run_one, self.jobs[key])
                    if running and _not_sent(future):
                        # Its cap does not fit beside the reservations of the runs out: wait
                        # for one to settle and give back what it did not spend.
                        pending.appendleft(key)
                        break
                    running[future] = key
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    key = running.pop(future)
                    result = self._result(future, key)
                    if isinstance(future.exception(), BrokenProcessPool):
                        pool = self.make_executor(workers)
                    stop = self._take(result) or stop
        except KeyboardInterrupt:
            stop = "interrupted"
            self.progress.notice("stopping: the runs under way record themselves as interrupted")
            self._stop_running(running, pool)
            try:
                done, _ = wait(running, timeout=STOP_WAIT_S)
                for future in done:
                    self._take(self._result(future, running[future]))
            except KeyboardInterrupt:
                pass  # a second Ctrl-C: leave now; the next session settles what was left open
        finally:
            # The pool stopped before the bench goes on: Python 3.11 wakes a pool's thread once
            # more as the interpreter ends, and a thread still stopping the workers then can close
            # that pipe under the write (a traceback after the bench's last line). The interpreter
            # would wait for the thread there anyway. A second Ctrl-C leaves the wait.
            with contextlib.suppress(KeyboardInterrupt):
                pool.shutdown(wait=True, cancel_futures=True)
        if stop is None and not pending:
            return "lost" if self.lost else "complete"
        return stop or "interrupted"

    # --- the files ---

    def finish(self, record: BenchRecord, status: str, resamples: int) -> BenchResult:
        state = journal.read(self.ctx.journal)
        planned = set(self.plan)
        rows = [row for key, row in state.finished.items() if key in planned]
        write_csv(self.root / RESULTS_FILE, rows)
        summary = summarize(
            rows,
            bench_id=self.ctx.bench_id,
            contestants=[(c.name, c.kind) for c in self.spec.contestants],
            planned=len(self.plan),
            resamples=resamples,
        )
        write_json(self.root / SUMMARY_FILE, json.dumps(summary, indent=2) + "\n")
        session = record.sessions[-1]
        session.finished_at = journal.now()
        session.status = status
        session.ran = self.ran
        record.status = status
        record.finished_at = session.finished_at
        write_json(self.root / RUN_FILE, record.model_dump_json(indent=2) + "\n")
        return BenchResult(self.root, status, rows, len(self.plan), summary, self.failure)


def run_bench(
    spec: BenchSpec,
    *,
    executor: ExecutorFactory = local_executor,
    progress: Progress | None = None,
    resamples: int = RESAMPLES,
    announce: Callable[[], None] | None = None,
) -> BenchResult:
    """Run (or resume) the bench in `spec.root`; returns how it ended and the figures.
    `announce` (the CLI's notices) is called once every refusal is past, before any task run."""
    if spec.runs_per_task < 1:
        raise UsageError(f"--runs-per-task must be at least 1, got {spec.runs_per_task}")
    if not spec.tasks:
        raise UsageError("the bench has no tasks: name a suite with --suite")
    names = [t.name for t in spec.tasks]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"tasks given twice: {', '.join(twice)}")
    unmet = [(t.name, m) for t in spec.tasks if (m := missing_requirements(t) + missing_tools(t))]
    if unmet:  # every run of the task would fail for want of a package, and be paid for
        name, missing = unmet[0]
        more = f" (and {len(unmet) - 1} more tasks)" if len(unmet) > 1 else ""
        raise UsageError(
            f"{name} requires {', '.join(missing)}{more}: install it beside ssw (on every "
            "worker of a cluster too), or leave the task out"
        )
    shown = progress or NoProgress()
    root = spec.root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    with hold_bench_folder(root) as stale:
        if stale is not None:
            shown.notice(f"took over {root}'s lock, left by pid {stale}, which no longer runs")
        return _run_held(spec, executor, shown, resamples, announce)


def _run_held(
    spec: BenchSpec,
    executor: ExecutorFactory,
    shown: Progress,
    resamples: int,
    announce: Callable[[], None] | None,
) -> BenchResult:
    """run_bench's session, with the bench folder's lock held."""
    bench = _Bench(spec, executor, shown)
    session = Session(
        started_at=journal.now(),
        command=list(spec.command),
        commit=source_commit()[0],
        workers=spec.workers,
        budget_usd_total=spec.budget_usd_total,
        executor=getattr(executor, "__name__", type(executor).__name__),
    )
    record = open_record(spec, bench.root, len(bench.plan), session)
    if announce is not None:
        announce()
    write_json(bench.root / RUN_FILE, record.model_dump_json(indent=2) + "\n")
    bench.settle_open_runs()
    finished = journal.read(bench.ctx.journal).finished
    shown.start(len(bench.plan), [r for k, r in finished.items() if k in set(bench.plan)])
    try:
        status = bench.run()
    finally:
        shown.close()
    return bench.finish(record, status, resamples)


def summarize_folder(root: Path, *, resamples: int = RESAMPLES) -> dict[str, Any]:
    """The summary of a bench folder, recomputed from its run.json and journal."""
    path = root / RUN_FILE
    if not path.is_file():
        raise UsageError(f"{root} is not a bench folder: it has no {RUN_FILE}")
    try:
        record = BenchRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UsageError(f"{path}: not a bench's run.json ({exc})") from exc
    rows = list(journal.read(root / journal.JOURNAL).finished.values())
    return summarize(
        rows,
        bench_id=record.bench_id,
        contestants=[(c.name, c.kind) for c in record.contestants],
        planned=record.planned,
        resamples=resamples,
    )
