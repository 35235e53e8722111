"""A cluster worker's side of a task run that `cluster.ClusterExecutor` sent (ADR 0029):
`run_on_worker` refuses a second try of a submission, runs the task run in a process kept per
worker thread (cluster_child.py), with the keys down its pipe, sends it SIGTERM when the
bench's stop event is set, and sends back the record folder, ledger rows and journal row it
made."""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from stepswitch.bench import journal
from stepswitch.bench.cluster_keys import TaskRunKeys
from stepswitch.bench.taskrun import BenchContext, TaskRunJob, TaskRunResult
from stepswitch.bench.travel import RemoteJob, RemoteOutcome, code_identity, read_folder
from stepswitch.bench.worker_folders import run_folder
from stepswitch.errors import UsageError
from stepswitch.ledger import open_ledger
from stepswitch.ledger.handoff import exported

STOP_POLL_S = 1.0  # how often a worker looks for its run's stop event
STOP_GRACE_S = 120.0  # after SIGTERM, how long the run has to record itself before SIGKILL
INSTALL = "pip install 'stepswitch[cluster]'"


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(f"--scheduler needs Dask distributed: {INSTALL}") from None
    return distributed


def run_on_worker(job: RemoteJob) -> RemoteOutcome:
    """Run one task run sent by a bench, in a temporary folder, and send back what it made."""
    if job.identity != code_identity():
        return RemoteOutcome(
            job.token, None, refused=f"it runs {code_identity()}, not {job.identity}"
        )
    distributed = _distributed()
    started = distributed.Event(f"ssw-started-{job.token}")
    if started.is_set():
        return RemoteOutcome(
            job.token, None, refused="a worker that started it was lost", lost=True
        )
    started.set()
    stop = distributed.Event(f"ssw-stop-{job.token}")
    with run_folder() as tmp:
        root = tmp / "bench" / job.bench_id  # the same bench id: the same run ids
        root.mkdir(parents=True)
        context = BenchContext(root, None, job.sandbox, job.network)
        task_job = TaskRunJob(
            context,
            job.task.unpack(tmp / "suites"),
            job.task.suite,
            job.contestant.at(tmp / "contestant"),
            job.key.attempt,
        )
        (tmp / "job.pickle").write_bytes(pickle.dumps(task_job))
        code = _run_child(tmp, stop, job.keys)
        return _outcome(job, root, tmp / "result.pickle", code)


# One process per worker thread runs the task runs, one after another: ssw is imported once,
# not per run (about 0.6 s of CPU, an eighth of a gate-bound task run), as a local bench's pool
# workers are. Idle ones wait here.
_idle: list[subprocess.Popen[bytes]] = []
_idle_lock = threading.Lock()


def _runner() -> subprocess.Popen[bytes]:
    with _idle_lock:
        while _idle:
            runner = _idle.pop()
            if runner.poll() is None:
                return runner
    command = [sys.executable, "-m", "stepswitch.bench.cluster_child", str(os.getpid())]
    return subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _answered(runner: subprocess.Popen[bytes], wait_s: float) -> bool | None:
    """True: the runner said `done`; False: it ended; None: nothing yet."""
    assert runner.stdout is not None
    ready, _, _ = select.select([runner.stdout], [], [], wait_s)
    if not ready:
        return None
    return runner.stdout.readline() == b"done\n"


def _run_child(tmp: Path, stop: Any, keys: TaskRunKeys) -> int:
    runner = _runner()
    assert runner.stdin is not None
    # The keys down the pipe with the job: never in job.pickle, the worker's environment or argv.
    paths = f"{tmp / 'job.pickle'}\t{tmp / 'result.pickle'}\t{tmp / 'child.log'}"
    job = f"{paths}\t{keys.as_line()}\n"
    try:
        runner.stdin.write(job.encode())
        runner.stdin.flush()
    except OSError:  # it died idle: the run is not started
        runner.kill()
        return runner.wait()
    checked, stopped = time.monotonic(), 0.0
    while True:
        answer = _answered(runner, 0.05)
        if answer is not None:
            break
        now = time.monotonic()
        if stopped and now - stopped > STOP_GRACE_S:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(runner.pid, signal.SIGKILL)
            answer = False
            break
        if not stopped and now - checked >= STOP_POLL_S:
            checked = now
            if stop.is_set():
                stopped = now
                with contextlib.suppress(ProcessLookupError):
                    os.kill(runner.pid, signal.SIGTERM)  # the run records itself interrupted
    if answer:
        with _idle_lock:
            _idle.append(runner)
        return 0
    runner.kill()
    return runner.wait()


def _outcome(job: RemoteJob, root: Path, result_path: Path, code: int) -> RemoteOutcome:
    key = job.key
    result: TaskRunResult | None = None
    if result_path.is_file():
        loaded = pickle.loads(result_path.read_bytes())
        result = loaded if isinstance(loaded, TaskRunResult) else None
    rows: list[dict[str, Any]] = []
    if (root / "ledger.sqlite").exists():
        with open_ledger(root / "ledger.sqlite", create=False) as ledger:
            rows = exported(ledger.rows(key.run_id(job.bench_id)))
    row = journal.read(root / journal.JOURNAL).finished.get(key)
    folder = root / key.folder()
    files, executable = read_folder(folder) if folder.is_dir() else ({}, frozenset())
    if result is None:
        why = f"the task run's process ended (exit code {code}) before it recorded a result"
        return RemoteOutcome(
            job.token, row, why, record=files, executable=executable, ledger_rows=rows
        )
    return RemoteOutcome(
        job.token,
        row,
        result.why,
        result.budget_stop,
        result.interrupted,
        record=files,
        executable=executable,
        ledger_rows=rows,
        released=result.row is None,
    )
