"""Task runs on a Dask distributed cluster: `ssw bench run --scheduler tls://HOST:PORT` (ADR 0029,
0049: who may reach the scheduler is cluster_access.py's).

The machine that runs `ssw bench run` keeps the bench: its folder, journal and ledger. Before a
task run is sent, its whole dollar cap (the policy's `limits.budget_usd`) is reserved in that
ledger against `--budget-usd-total`; the run travels as data (travel.py) to a worker, which
runs it in a process of its own with a ledger of its own, under the same cap, and sends back its
record folder, its ledger rows and its journal row; only then are they written here, the rows in
place of the reservation. A run whose worker is lost is counted at its whole reservation and
never sent again (a built-in's, whose reservation is $0, runs again on resume): the first try
of a submission marks it started on the scheduler, and a second try (Dask re-runs a task whose
worker died) finds the mark and refuses.

Keys go from this machine with each task run, only those its policy names, over the scheduler's
TLS connection, and on the worker only into the process that runs it (cluster_keys.py). Ctrl-C
sets a stop event per run out: its worker sends SIGTERM to the run's process group, and the run
records itself as interrupted, as in a local bench. What the worker does is cluster_worker.py's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

from stepswitch.bench import journal
from stepswitch.bench.cluster_access import SchedulerAccess
from stepswitch.bench.cluster_keys import TaskRunKeys, keys_for, secret_names
from stepswitch.bench.cluster_worker import _distributed, run_on_worker
from stepswitch.bench.contestants import BuiltinContestant, Contestant, provider_env
from stepswitch.bench.readback import lost_row, scrubbed
from stepswitch.bench.taskrun import TaskRunJob, TaskRunResult, ledger_for, run_one
from stepswitch.bench.travel import (
    RemoteJob,
    RemoteOutcome,
    TaskFiles,
    TravellingContestant,
    code_identity,
    write_folder,
)
from stepswitch.errors import UsageError
from stepswitch.ledger import Ledger
from stepswitch.ledger.handoff import (
    lose_task_run,
    release_task_run,
    reserve_task_run,
    settle_task_run,
)
from stepswitch.records.money import format_usd

CONNECT_TIMEOUT_S = 10


# --- the machine that runs the bench ---


def connect(access: SchedulerAccess) -> Any:
    """A client of the scheduler `access` names (checked before: cluster_access.py), once every
    worker runs this same ssw."""
    address = access.address
    distributed = _distributed()
    try:
        client = distributed.Client(
            address,
            security=access.security(),
            timeout=CONNECT_TIMEOUT_S,
            set_as_default=False,
        )
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"--scheduler {address}: cannot reach the scheduler ({exc})") from None
    try:
        try:
            identities = client.run(code_identity)
        except Exception as exc:  # a worker without ssw cannot even unpickle the check
            raise UsageError(
                f"--scheduler {address}: a worker could not run ssw ({type(exc).__name__}: "
                f"{exc}); install the same ssw on every worker"
            ) from None
        if not identities:
            raise UsageError(
                f"--scheduler {address}: the scheduler has no workers; start one on each "
                f"machine with `dask worker {address}` and the worker's certificate (ssw bench "
                "cluster-certs prints the line), no provider key in its environment"
            )
        mine = code_identity()
        for worker, theirs in sorted(identities.items()):
            if theirs != mine:
                raise UsageError(
                    f"--scheduler {address}: worker {worker} runs {theirs}, this bench {mine}; "
                    "install the same ssw on every worker"
                )
    except BaseException:
        client.close()
        raise
    return client


def run_keys(contestant: Contestant) -> TaskRunKeys:
    """The provider keys a task run of `contestant` needs, from this machine (an AuthError
    naming the first missing one); none for the built-ins."""
    if isinstance(contestant, BuiltinContestant):
        return TaskRunKeys()
    from stepswitch.registry.presets import load_registry

    policy = contestant.load_policy()
    providers = [worker.provider for worker in policy.workers.values()]
    return keys_for(providers, load_registry(), provider_env())


def workers_holding_keys(client: Any) -> dict[str, list[str]]:
    """The workers whose own environment holds variables that look like keys, and their names
    (never a value): a worker needs none, so each is a key exposed for its whole life."""
    try:
        found: dict[str, list[str]] = client.run(_secret_names_here)
    except Exception:  # a notice only: a worker that cannot say is not a reason to stop
        return {}
    return {worker: names for worker, names in sorted(found.items()) if names}


def _secret_names_here() -> list[str]:
    return secret_names(os.environ)


def worker_threads(client: Any) -> int:
    """How many task runs the cluster's workers take at once: one per worker thread."""
    threads: dict[str, int] = client.nthreads()
    return max(1, sum(threads.values()))


def cap_usd(contestant: Contestant) -> float:
    """What a task run of `contestant` may spend at most: $0 for the built-ins (no model)."""
    if isinstance(contestant, BuiltinContestant):
        return 0.0
    cap = contestant.load_policy().limits.budget_usd
    if cap is None:
        raise UsageError(
            f"--scheduler: contestant {contestant.name!r} sets no [limits] budget_usd; a task "
            "run sent to a cluster reserves its whole cap first, and a run lost with its worker "
            "is counted at that cap"
        )
    return cap


def cluster_executor(client: Any) -> Callable[[int], Executor]:
    """The bench runner's executor factory for `client`'s cluster."""

    def on_cluster(workers: int) -> Executor:
        return ClusterExecutor(client)

    on_cluster.__name__ = "cluster"
    return on_cluster


class ClusterExecutor(Executor):
    """Sends `run_one(job)` to the cluster; its future is this machine's, done once the run's
    files, rows and journal line are written here."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._settling = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ssw-settle")
        self._out: dict[str, Any] = {}  # token -> the distributed future of a run out
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if fn is not run_one or len(args) != 1 or kwargs or not isinstance(args[0], TaskRunJob):
            raise TypeError("a cluster executor takes task runs only: submit(run_one, job)")
        job: TaskRunJob = args[0]
        ctx, key = job.context, job.key
        done: Future[TaskRunResult] = Future()
        cap = cap_usd(job.contestant)
        ledger = ledger_for(ctx.ledger_path)
        run_id = key.run_id(ctx.bench_id)
        reservation = reserve_task_run(
            ledger,
            run_id=run_id,
            task_id=key.task,
            bench_id=ctx.bench_id,
            cap_usd=cap,
            budget=ctx.bench_budget(),
        )
        if reservation is None:
            why = f"its cap of {format_usd(cap)} does not fit in what the bench budget has left"
            done.set_result(TaskRunResult(key, None, why, budget_stop=True, not_sent=True))
            return done
        token = uuid.uuid4().hex
        try:
            remote = RemoteJob(
                token=token,
                bench_id=ctx.bench_id,
                key=key,
                task=TaskFiles.of(job.task_folder, job.suite),
                contestant=TravellingContestant.of(job.contestant),
                sandbox=ctx.sandbox,
                network=ctx.network,
                identity=code_identity(),
                keys=run_keys(job.contestant),
            )
        except BaseException:
            release_task_run(ledger, reservation)
            raise
        shutil.rmtree(ctx.root / key.folder(), ignore_errors=True)  # what a released try left
        journal.append(ctx.journal, "started", key, run_id=run_id, pid=os.getpid(), cluster=token)
        out = self.client.submit(
            run_on_worker, remote, key=f"ssw-task-run-{token}", pure=False, retries=0
        )
        with self._lock:
            self._out[token] = out

        def arrived(finished: Any) -> None:
            self._settling.submit(self._settle, finished, job, token, reservation, done)

        out.add_done_callback(arrived)
        return done

    def stop_runs(self) -> None:
        """Ctrl-C: every run out is told to stop (its worker sends it SIGTERM)."""
        distributed = _distributed()
        with self._lock:
            tokens = list(self._out)
        for token in tokens:
            with contextlib.suppress(Exception):
                distributed.Event(f"ssw-stop-{token}", client=self.client).set()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            with self._lock:
                out = list(self._out.values())
            for future in out:
                with contextlib.suppress(Exception):
                    future.cancel()
        self._settling.shutdown(wait=wait, cancel_futures=cancel_futures)

    # --- back on this machine ---

    def _settle(
        self,
        finished: Any,
        job: TaskRunJob,
        token: str,
        reservation: int,
        done: Future[TaskRunResult],
    ) -> None:
        try:
            try:
                outcome: RemoteOutcome = finished.result()
            except BaseException as exc:  # the worker died (KilledWorker), or the call broke
                done.set_result(_lost(job, reservation, f"{type(exc).__name__}: {exc}"))
                return
            done.set_result(_take(job, reservation, outcome))
        except BaseException as exc:
            if not done.done():
                done.set_exception(exc)
        finally:
            with self._lock:
                self._out.pop(token, None)


def _lost(job: TaskRunJob, reservation: int, why: str) -> TaskRunResult:
    """A task run whose worker was lost. Its ledger rows went with the worker; what this
    machine's ledger holds of it is the reservation of its whole cap. A $0 cap (the built-ins)
    proves nothing could be spent: the run is released and runs again when the bench resumes.
    Any other cap may have been spent: the run counts at it and is never sent again."""
    ledger = ledger_for(job.context.ledger_path)
    if cap_usd(job.contestant) == 0.0:
        release_task_run(ledger, reservation)
        released = (
            f"the worker running it was lost ({why}); its reservation was $0, so nothing was "
            "spent: it runs again when the same command resumes the bench"
        )
        journal.append(job.context.journal, "released", job.key, why=released)
        return TaskRunResult(job.key, None, released, lost=True)
    lose_task_run(ledger, reservation)
    reason = (
        f"the worker running it was lost ({why}); counted at its whole reservation, not run again"
    )
    return _harness_error(job, ledger, reason)


def _harness_error(job: TaskRunJob, ledger: Ledger, reason: str) -> TaskRunResult:
    """A task run that ended without a row of its own: a harness error at what the ledger holds
    for it, journalled as finished so that resume never sends it again."""
    ctx, key = job.context, job.key
    row = lost_row(
        key, job.contestant.kind, ctx.root, ctx.bench_id, ledger,
        outcome="harness_error", reason=reason,
    )  # fmt: skip
    journal.finish(ctx.journal, scrubbed(row, ctx.root))
    return TaskRunResult(key, row)


def _take(job: TaskRunJob, reservation: int, outcome: RemoteOutcome) -> TaskRunResult:
    """The run's files, rows and journal line written here, from what its worker sent."""
    ctx, key = job.context, job.key
    ledger = ledger_for(ctx.ledger_path)
    if outcome.lost:
        return _lost(job, reservation, outcome.refused)
    if outcome.refused:
        release_task_run(ledger, reservation)
        raise RuntimeError(f"a worker refused the task run: {outcome.refused}")
    folder = ctx.root / key.folder()
    write_folder(folder, outcome.record, outcome.executable)
    settle_task_run(ledger, reservation, outcome.ledger_rows)
    if outcome.row is not None:
        journal.finish(ctx.journal, outcome.row)
        return TaskRunResult(
            key, outcome.row, outcome.why, outcome.budget_stop, outcome.interrupted
        )
    if outcome.ledger_rows and not outcome.released:
        # Its process died after a model call, before it could say: counted, not run again.
        return _harness_error(job, ledger, outcome.why)
    journal.append(ctx.journal, "released", key, why=outcome.why)
    shutil.rmtree(folder, ignore_errors=True)
    return TaskRunResult(
        key, None, outcome.why, budget_stop=outcome.budget_stop, interrupted=outcome.interrupted
    )
