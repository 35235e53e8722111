"""A bench killed with SIGKILL mid-run resumes with the same command: no task run lost, none run
twice, and the one that was under way (it had called a model) kept as a failure."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.bench import journal
from stepswitch.bench.plan import RunKey
from tests.harness.cli import wait_for

from . import write_task

ROOT = Path(__file__).resolve().parents[2]


def child(out: Path, suite: Path, release: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.bench.bench_child", str(out), str(suite), str(release)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and " Z " not in Path(f"/proc/{pid}/stat").read_text()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_a_bench_killed_mid_run_resumes_without_losing_or_repeating_a_run(tmp_path: Path):
    write_task(tmp_path, "t1")
    write_task(tmp_path, "t2")
    suite, out, release = tmp_path / "suite", tmp_path / "runs" / "b1", tmp_path / "release"
    slow_t1 = RunKey("suite/t1", "slow", 0)
    steps = out / slow_t1.folder() / "steps.jsonl"

    first = child(out, suite, release)
    try:
        # slow's EDIT on t1 waits: by then it has called its (fake) model four times.
        wait_for(lambda: steps.exists() and steps.read_text().count('"model_step"') >= 4, "slow")
        [started] = [e for e in lines(out / journal.JOURNAL) if e["contestant"] == "slow"]
        worker = started["pid"]
        assert worker != first.pid  # a pool worker, not the main process
        os.kill(first.pid, signal.SIGKILL)  # the main process only: the worker must follow it
        first.wait(timeout=60)
        wait_for(lambda: not alive(worker), "the worker dying with the main process", 30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)  # whatever the test left of the first session
    assert first.returncode == -signal.SIGKILL

    second = child(out, suite, release)  # the same command
    out_text, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    assert out_text.strip() == "complete"

    events = lines(out / journal.JOURNAL)
    keys = [(e["task"], e["contestant"]) for e in events if e["event"] == "started"]
    assert sorted(keys) == sorted(set(keys))  # no run started twice
    finished = [e for e in events if e["event"] == "finished"]
    assert len(finished) == 4 and len({(e["task"], e["contestant"]) for e in finished}) == 4
    rows = {(e["task"], e["contestant"]): e["row"] for e in finished}
    lost = rows[("suite/t1", "slow")]
    assert (lost["outcome"], lost["passed"]) == ("interrupted", False)
    assert lost["reason"].startswith("interrupted: the bench ended during this run")
    assert lost["steps"] == 4 and lost["run_outcome"] == "running"  # as the kill left it
    # ... and the task run's own record now says what the journal says, at the ledger's range.
    task_record = json.loads((out / slow_t1.folder() / "run.json").read_text())
    assert task_record["outcome"] == "interrupted"
    assert task_record["reason"].startswith("abandoned: the bench ended during this run")
    ledger_range = task_record["totals"]["ledger"]
    assert (ledger_range["low"], ledger_range["high"]) == (
        lost["dollars_low"],
        lost["dollars_high"],
    )
    assert rows[("suite/t1", "oracle")]["passed"] and rows[("suite/t2", "oracle")]["passed"]
    assert rows[("suite/t2", "slow")]["outcome"] == "no_change"  # it does not wait on t2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and summary["task_runs"] == 4
    record = json.loads((out / "run.json").read_text())
    # The killed session is said to be over, not left running; when it ended is unknown.
    assert [s["status"] for s in record["sessions"]] == ["interrupted", "complete"]
    assert record["sessions"][0]["finished_at"] is None
    assert (out / "results.csv").read_text().count("\n") == 5


@pytest.mark.slow
def test_an_interrupted_oracle_run_runs_again_instead_of_counting_as_a_failure(tmp_path: Path):
    """The built-ins pay nothing: an oracle run the bench lost (its start in the journal, its
    $0 calls in the ledger, no finish) is released and run again on resume, not kept failed."""
    from stepswitch.bench.contestants import BuiltinContestant
    from stepswitch.bench.executor import inline_executor
    from stepswitch.bench.runner import BenchSpec, run_bench
    from stepswitch.bench.task import load_suite
    from stepswitch.ledger import open_ledger

    write_task(tmp_path, "t1")
    spec = BenchSpec(
        root=tmp_path / "runs" / "b1",
        tasks=load_suite(tmp_path / "suite"),
        contestants=[BuiltinContestant("oracle")],
    )
    assert run_bench(spec, executor=inline_executor, resamples=100).status == "complete"
    path = spec.root / journal.JOURNAL
    kept = [line for line in path.read_text().splitlines() if '"finished"' not in line]
    path.write_text("\n".join(kept) + "\n")  # as a kill during the run leaves it
    with open_ledger(spec.root / "ledger.sqlite") as ledger:
        assert ledger.rows()  # it went through the ledger: $0 rows, but rows
    again = run_bench(spec, executor=inline_executor, resamples=100)
    assert again.status == "complete"
    (row,) = again.rows
    assert (row.passed, row.outcome) == (True, "done")
    events = [e["event"] for e in lines(path)]
    assert events == ["started", "released", "started", "finished"]
