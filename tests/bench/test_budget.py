"""--budget-usd-total across worker processes: one ledger, every attempt admitted against the
bench's budget before it leaves, whichever process sends it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepswitch.bench import journal
from stepswitch.bench.executor import local_executor
from stepswitch.bench.runner import BenchSpec, run_bench
from stepswitch.bench.task import load_suite
from stepswitch.ledger import open_ledger
from tests.harness.task import use_extra_models

from . import write_task
from .fakes import FakeContestant

# Dollars; a task run of the priced fake costs about $0.19 in six calls (it changes nothing:
# plan, navigate, read, run and two edits, then no_change), so the cap falls inside a run.
CAP = 0.5


@pytest.mark.slow
def test_the_bench_budget_holds_across_two_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    use_extra_models(monkeypatch, tmp_path)  # scripted-priced: $10 per million tokens each way
    for name in ("t1", "t2", "t3"):
        write_task(tmp_path, name)
    contestants = [
        FakeContestant("a", "priced", model="scripted-priced"),
        FakeContestant("b", "priced", model="scripted-priced"),
    ]
    spec = BenchSpec(
        root=tmp_path / "runs" / "b1",
        tasks=load_suite(tmp_path / "suite"),
        contestants=contestants,
        budget_usd_total=CAP,
        workers=2,
    )
    result = run_bench(spec, executor=local_executor, resamples=100)

    assert (result.status, result.exit_code) == ("budget_stop", 1)
    assert 1 <= len(result.rows) < 6
    with open_ledger(spec.root / "ledger.sqlite") as ledger:
        rows = ledger.rows()
        spend = ledger.spend("bench", "b1")
    assert len({r.pid for r in rows}) == 2  # both workers called
    assert sum(r.usd or 0.0 for r in rows) <= CAP + 1e-9
    assert spend.high <= CAP + 1e-9 and spend.open_calls == 0
    stopped = [r for r in result.rows if "the bench budget (b1) of $0.5" in r.reason]
    assert stopped and all(r.outcome == "limit" and not r.passed for r in stopped)
    assert sum(r.dollars_high for r in result.rows) == pytest.approx(spend.high)
    events = [json.loads(line) for line in (spec.root / journal.JOURNAL).open()]

    again = run_bench(spec, executor=local_executor, resamples=100)  # the same command
    assert again.status == "budget_stop" and again.rows == result.rows
    later = [json.loads(line) for line in (spec.root / journal.JOURNAL).open()][len(events) :]
    # At most one run per worker starts; its first call is refused before it leaves, so it is
    # released (it runs once the budget is raised), never counted.
    kinds = [e["event"] for e in later]
    assert set(kinds) <= {"started", "released"} and kinds.count("started") <= 2
    assert kinds.count("started") == kinds.count("released")
    with open_ledger(spec.root / "ledger.sqlite") as ledger:
        assert len(ledger.rows()) == len(rows)
