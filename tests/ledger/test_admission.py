"""Admission control: reserve the worst case before an attempt leaves, refuse the one that
could pass a task, run or bench budget, counting open reservations and lost-usage bounds."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from stepswitch.errors import RunStopped, UsageError
from stepswitch.ledger import ORPHAN_ERROR, Budget, BudgetExceeded, open_ledger
from stepswitch.wire.types import Usage

from .conftest import WORKER_SCRIPT, WORST, budget, intent, ok


@pytest.mark.parametrize("scope", ["task", "run", "bench"])
def test_the_call_that_would_pass_a_budget_is_refused_counting_open_reservations(ledger, scope):
    limited = intent(budgets=(budget(scope, 0.05),))
    first = ledger.reserve(limited, 1, 3000)
    ledger.reserve(limited, 1, 3000)
    assert first.reserved_usd == pytest.approx(WORST)
    with pytest.raises(BudgetExceeded) as info:
        ledger.reserve(limited, 1, 3000)
    error = info.value
    assert isinstance(error, RunStopped) and error.outcome == "limit"
    assert error.budget.scope == scope
    assert error.counted_usd == pytest.approx(2 * WORST)
    assert error.worst_usd == pytest.approx(WORST)
    assert f"the {scope} budget" in str(error) and "$0.05" in str(error)
    assert f"${2 * WORST:.4f}" in str(error) and f"${WORST:.4f}" in str(error)
    assert len(ledger.rows()) == 2  # a refused call leaves no row: it never left the machine
    ledger.settle(first, ok(Usage(prompt_tokens=100, completion_tokens=10)))
    ledger.reserve(limited, 1, 3000)  # settling below the reservation gave room back


def test_other_keys_spend_does_not_count(ledger):
    ledger.reserve(intent(task_id="task-2", run_id="run-2", bench_id=None), 1, 3000)
    ledger.reserve(intent(budgets=(budget("task", 0.021), budget("run", 0.021))), 1, 3000)


def test_the_first_budget_that_would_pass_is_named(ledger):
    limited = intent(budgets=(budget("task", 1.0), budget("bench", 0.01)))
    with pytest.raises(BudgetExceeded, match="bench budget"):
        ledger.reserve(limited, 1, 3000)


def test_lost_usage_counts_at_its_high_bound_when_the_policy_continues(ledger):
    reservation = ledger.reserve(intent(), 1, 3000)
    ledger.settle(reservation, ok(None))
    with pytest.raises(BudgetExceeded):
        ledger.reserve(intent(budgets=(budget("run", 0.03),), count_high_bounds=True), 2, 3000)
    # Counting the certain low bound only, the same call fits.
    ledger.reserve(intent(budgets=(budget("run", 0.03),), count_high_bounds=False), 2, 3000)
    spend = ledger.spend("run", "run-1")
    assert spend.low == 0.0
    assert spend.high == pytest.approx(2 * WORST)
    assert (spend.open_calls, spend.lost_calls) == (1, 1)


def test_settled_dollars_count_exactly(ledger):
    reservation = ledger.reserve(intent(), 1, 3000)
    row = ledger.settle(reservation, ok(Usage(prompt_tokens=1000, completion_tokens=900)))
    assert row.usd == pytest.approx(0.011)
    spend = ledger.spend("task", "task-1")
    assert spend.low == spend.high == pytest.approx(0.011)
    with pytest.raises(BudgetExceeded):  # $0.011 settled + $0.02006 reserved
        ledger.reserve(intent(budgets=(budget("task", 0.0310),)), 1, 3000)
    ledger.reserve(intent(budgets=(budget("task", 0.0311),)), 1, 3000)


def test_a_call_whose_worst_case_alone_passes_the_budget_is_refused(ledger):
    with pytest.raises(BudgetExceeded):
        ledger.reserve(intent(budgets=(budget("task", 0.01),)), 1, 3000)


def test_unpriced_calls_reserve_nothing_but_are_rows(ledger):
    reservation = ledger.reserve(intent(price=None, budgets=(budget("task", 0.001),)), 1, 3000)
    assert reservation.reserved_usd == 0.0
    assert ledger.rows()[0].dollars_text() == "unpriced"
    assert ledger.spend("task", "task-1").unpriced_calls == 1


@pytest.mark.parametrize("limit", [0, -1.0, math.nan, math.inf, -math.inf, "4", True, None])
def test_a_budget_must_be_a_positive_number(limit):
    with pytest.raises(UsageError, match="positive number of dollars"):
        Budget("task", "t", limit)  # type: ignore[arg-type]


def test_a_budget_scope_must_be_known():
    with pytest.raises(UsageError, match="unknown budget scope"):
        Budget("team", "t", 1.0)  # type: ignore[arg-type]


def test_budget_flags_are_named():
    with pytest.raises(UsageError, match="--budget-usd-total"):
        Budget("bench", "b", -2)


def test_concurrent_admission_across_processes_never_passes_the_cap(tmp_path):
    path = tmp_path / "ledger.sqlite"
    open_ledger(path).close()
    cap = 0.2  # each reservation is ~$0.0061: about 33 fit with nothing settled
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(WORKER_SCRIPT),
                "admit",
                json.dumps(
                    {"ledger": str(path), "worker": f"a{n}", "cap": cap, "calls": 100, "seed": n}
                ),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err[-3000:]
    counts = [json.loads(out) for out, _ in outputs]
    with open_ledger(path) as ledger:
        rows = ledger.rows()
        spend = ledger.spend("bench", "bench-1")
    # Left open by workers that had ended; recovered by whichever process opened the file next.
    orphans = [r for r in rows if r.error == ORPHAN_ERROR]
    assert len(orphans) == sum(c.get("left_open", 0) for c in counts)
    assert all(r.status == "bound" for r in orphans)
    assert len(rows) == sum(c.get("admitted", 0) for c in counts)
    assert sum(c.get("refused", 0) for c in counts) > 0
    assert spend.high <= cap + 1e-9
    assert spend.high > cap - 2 * max(r.reserved_usd for r in rows)
