"""The process a cluster worker runs its task runs in (ADR 0029): `python -m
stepswitch.bench.cluster_child PARENT_PID`, started once per worker thread, so ssw is imported
once, as a local bench's pool workers do. Jobs come one per line on stdin,
`JOB<TAB>RESULT<TAB>LOG<TAB>KEYS` (the run's provider keys as JSON, held for that run only,
ADR 0049); after each it writes the result file and `done` on stdout. In a session
of its own; SIGTERM during a run makes it record itself as interrupted, as in a local bench. It
dies with the worker process.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import traceback
from pathlib import Path

from stepswitch.bench.cluster_keys import TaskRunKeys
from stepswitch.bench.contestants import set_keys
from stepswitch.bench.executor import die_with_parent
from stepswitch.bench.taskrun import TaskRunJob, forget_ledger, run_one


def run_job(line: str) -> None:
    *paths, keys_line = line.split("\t")
    job_path, result_path, log_path = (Path(p) for p in paths)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 2)
    os.close(log)
    job = pickle.loads(job_path.read_bytes())
    if not isinstance(job, TaskRunJob):
        raise TypeError(f"{job_path} holds no task run")
    set_keys(TaskRunKeys.from_line(keys_line).values())  # for this run only
    try:
        result = run_one(job)
    finally:
        set_keys({})
        forget_ledger(job.context.ledger_path)  # its folder goes with the job
    staged = result_path.with_suffix(".tmp")
    staged.write_bytes(pickle.dumps(result))
    staged.replace(result_path)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the worker decides: SIGTERM stops the run
    die_with_parent(int(argv[0]))
    for line in sys.stdin:  # until the worker closes the pipe
        try:
            run_job(line.rstrip("\n"))
        except Exception:
            traceback.print_exc()  # into the job's log; no result: the worker says so
        sys.stdout.write("done\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
