"""The cluster's overhead: oracle on a suite through 2 local worker processes (`ssw bench run
--workers 2`) against a Dask LocalCluster of 2 single-thread worker processes on this same
machine (`--scheduler`), task runs per hour and the ratio. Not a test: numbers from a shared
machine; both run on the same CPUs, so the ratio is what the cluster's path costs (the task
files sent, the run in a child process, the record folder and ledger rows sent back).

    .venv/bin/python bench/bench-speed/cluster.py [--reps 2] [--suite S] [--out F]

Sessions alternate (local, cluster, cluster, local, ...) so a slow minute falls on both. The
cluster is started once, before the first session, and its start is reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import distributed
from sides import machine, side_by_side

from stepswitch.bench.cluster import cluster_executor
from stepswitch.bench.contestants import BuiltinContestant
from stepswitch.bench.executor import local_executor
from stepswitch.bench.runner import BenchSpec, ExecutorFactory, run_bench
from stepswitch.bench.task import load_suite

HERE = Path(__file__).resolve().parent


def one_session(suite: Path, where: str, executor: ExecutorFactory) -> dict[str, Any]:
    tasks = load_suite(suite)
    with tempfile.TemporaryDirectory(prefix="ssw-bench-cluster-") as tmp:
        spec = BenchSpec(
            root=Path(tmp) / f"speed-{where}",
            tasks=tasks,
            contestants=[BuiltinContestant("oracle")],
            workers=2,
        )
        load_before = os.getloadavg()[0]
        began = time.monotonic()
        result = run_bench(spec, executor=executor, resamples=0)
        wall = time.monotonic() - began
    rows = result.rows
    assert result.status == "complete" and len(rows) == len(tasks), result.status
    return {
        "where": where,
        "task_runs": len(rows),
        "passed": sum(r.passed for r in rows),
        "wall_s": round(wall, 2),
        "task_runs_per_hour": round(len(rows) / (wall / 3600), 1),
        "median_task_run_wall_s": round(statistics.median(r.timings["wall_s"] for r in rows), 3),
        "load_average_before": round(load_before, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=Path("bench/suites/general"))
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results-cluster.json")
    args = parser.parse_args()
    began = time.monotonic()
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    )
    client = distributed.Client(cluster, set_as_default=False)
    start_s = time.monotonic() - began
    on_cluster = cluster_executor(client)
    sessions = []
    try:
        for rep in range(args.reps):
            order = ("local", "cluster") if rep % 2 == 0 else ("cluster", "local")
            for where in order:
                executor = local_executor if where == "local" else on_cluster
                found = one_session(args.suite, where, executor)
                sessions.append(found)
                print(json.dumps(found), file=sys.stderr, flush=True)
    finally:
        client.close()
        cluster.close()
    rates, pairs = side_by_side(sessions, "where", "task_runs_per_hour", "local", "cluster")
    ratio = statistics.median(pairs)
    report = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/bench-speed/cluster.py " + " ".join(sys.argv[1:]),
        "suite": args.suite.as_posix(),
        "machine": machine(distributed=distributed.__version__),
        "cluster_start_s": round(start_s, 2),
        "task_runs_per_hour_median": rates,
        "ratio_cluster_over_local_per_repetition": pairs,
        "ratio_cluster_over_local_median": ratio,
        "overhead_median": round(1 - ratio, 3),
        "sessions": sessions,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "sessions"}, indent=2))


if __name__ == "__main__":
    main()
