"""The bench's own speed: oracle on a suite with 1 worker and with 2, task runs per minute and
the ratio, and where each task run's time goes. Not a test: numbers from a shared machine.

    .venv/bin/python bench/bench-speed/run.py [--reps 2] [--suite S] [--out F]

Sessions alternate (1, 2, 2, 1, ...) so a slow minute of the machine falls on both. Each is a
fresh bench folder in a temporary directory, through `run_bench` with the process pool `ssw
bench run --workers N` uses. Per task run (the journal's timings): setup (copy, base commit, the
reference computed), pre-flight (the gates on the untouched tree), the agent (`run_task`; its
gates inside), grading; the overhead is the wall time outside any test runner.
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

from sides import machine, side_by_side

from stepswitch.bench.contestants import BuiltinContestant
from stepswitch.bench.executor import local_executor
from stepswitch.bench.runner import BenchSpec, run_bench
from stepswitch.bench.task import load_suite

HERE = Path(__file__).resolve().parent


def _load() -> float:
    return os.getloadavg()[0]


def one_session(suite: Path, workers: int) -> dict[str, Any]:
    tasks = load_suite(suite)
    with tempfile.TemporaryDirectory(prefix="ssw-bench-speed-") as tmp:
        spec = BenchSpec(
            root=Path(tmp) / f"speed-w{workers}",
            tasks=tasks,
            contestants=[BuiltinContestant("oracle")],
            workers=workers,
        )
        load_before = _load()
        began = time.monotonic()
        result = run_bench(spec, executor=local_executor, resamples=0)
        wall = time.monotonic() - began
    rows = result.rows
    assert result.status == "complete" and len(rows) == len(tasks), result.status
    per_run = {
        key: statistics.median(r.timings.get(key, 0.0) for r in rows)
        for key in ("setup_s", "preflight_s", "agent_s", "gates_s", "grading_s", "wall_s")
    }
    overhead = statistics.median(
        r.timings["wall_s"] - r.timings["preflight_s"] - r.timings["gates_s"] - r.grading_s
        for r in rows
    )
    return {
        "workers": workers,
        "task_runs": len(rows),
        "passed": sum(r.passed for r in rows),
        "wall_s": round(wall, 2),
        "task_runs_per_minute": round(len(rows) / (wall / 60), 2),
        "median_per_task_run_s": {k: round(v, 3) for k, v in per_run.items()},
        "median_overhead_per_task_run_s": round(overhead, 3),
        "load_average_before": round(load_before, 2),
        "load_average_after": round(_load(), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=Path("bench/suites/general"))
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    args = parser.parse_args()
    sessions = []
    for rep in range(args.reps):
        for workers in (1, 2) if rep % 2 == 0 else (2, 1):
            found = one_session(args.suite, workers)
            sessions.append(found)
            print(json.dumps(found), file=sys.stderr, flush=True)
    rates, pairs = side_by_side(sessions, "workers", "task_runs_per_minute", 1, 2)
    report = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python bench/bench-speed/run.py " + " ".join(sys.argv[1:]),
        "suite": args.suite.as_posix(),
        "machine": machine(),
        "task_runs_per_minute_median": {str(w): r for w, r in rates.items()},
        "ratio_2_over_1_median": round(rates[2] / rates[1], 3),
        "ratio_2_over_1_per_repetition": pairs,
        "sessions": sessions,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "sessions"}, indent=2))


if __name__ == "__main__":
    main()
