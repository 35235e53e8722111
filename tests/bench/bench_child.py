"""A bench in its own process, for the tests that kill it: `python -m tests.bench.bench_child
OUT SUITE RELEASE [BUDGET]`. Contestants: oracle, and `slow`, whose EDIT step on task t1 waits
until the file RELEASE exists; one worker process, as `ssw bench run --workers 1` has."""

from __future__ import annotations

import sys
from pathlib import Path

from stepswitch.bench.contestants import BuiltinContestant
from stepswitch.bench.runner import BenchSpec, run_bench
from stepswitch.bench.task import load_suite

from .fakes import FakeContestant

if __name__ == "__main__":
    out, suite, release = (Path(a) for a in sys.argv[1:4])
    contestants = [
        BuiltinContestant("oracle"),
        FakeContestant("slow", "block", block_task="t1", release=str(release)),
    ]
    spec = BenchSpec(root=out, tasks=load_suite(suite), contestants=contestants, workers=1)
    result = run_bench(spec, resamples=100)
    print(result.status, flush=True)
    sys.exit(result.exit_code)
