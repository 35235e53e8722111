"""The bench's statistics against cases computed by hand."""

from __future__ import annotations

import pytest

from stepswitch.bench.results import ResultRow
from stepswitch.bench.stats import cluster_bootstrap, mcnemar_exact, percentile
from stepswitch.bench.summary import compare


def test_mcnemar_exact_matches_the_binomial_tail_by_hand():
    # n = b + c discordant pairs; p = 2 * P(X <= min(b, c)) for X ~ Binomial(n, 1/2), at most 1.
    # b=1, c=5: n=6, P(X<=1) = (C(6,0) + C(6,1)) / 2^6 = (1 + 6) / 64 = 7/64; p = 14/64.
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64)
    # b=0, c=6: P(X<=0) = 1/64; p = 2/64 = 0.03125.
    assert mcnemar_exact(0, 6) == pytest.approx(0.03125)
    # b=0, c=4: 2 * 1/16 = 0.125 (four tasks one way is not yet significant).
    assert mcnemar_exact(4, 0) == pytest.approx(0.125)
    # b=2, c=2: 2 * (1 + 4 + 6) / 16 = 22/16, capped at 1.
    assert mcnemar_exact(2, 2) == 1.0
    # b=3, c=10: n=13, P(X<=3) = (1 + 13 + 78 + 286) / 8192 = 378/8192; p = 756/8192.
    assert mcnemar_exact(3, 10) == pytest.approx(756 / 8192)
    assert mcnemar_exact(0, 0) == 1.0


def test_percentile_interpolates_between_order_statistics():
    # Type 7: position q * (n - 1). For [1, 2, 3, 4]: q=0.5 -> 1.5 -> 2.5; q=0.25 -> 0.75 -> 1.75.
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.25) == 1.75
    assert percentile([1.0, 2.0, 3.0, 4.0], 1.0) == 4.0


def _ratio(sample):
    return sum(a for a, _ in sample) / sum(b for _, b in sample)


def test_two_task_bootstrap_interval_is_the_two_extreme_resamples():
    # Tasks as (A's dollars, B's dollars): t1 = (1, 2), t2 = (3, 2). A resample of two tasks is
    # (t1, t1) with probability 1/4 -> ratio 2/4 = 0.5; (t2, t2) 1/4 -> 6/4 = 1.5; mixed 1/2 ->
    # 4/4 = 1.0. Both extremes hold 25% each, far more than the 2.5% tails: the 95% interval is
    # [0.5, 1.5], and the point estimate on the tasks as they are is 4/4 = 1.0.
    found = cluster_bootstrap([(1.0, 2.0), (3.0, 2.0)], {"r": _ratio}, resamples=2000)["r"]
    assert (found.point, found.low, found.high) == (1.0, 0.5, 1.5)
    assert found.resamples == 2000 and found.undefined == 0


def test_identical_tasks_give_an_interval_of_width_zero():
    found = cluster_bootstrap([(2.0, 4.0)] * 5, {"r": _ratio}, resamples=500)["r"]
    assert (found.point, found.low, found.high) == (0.5, 0.5, 0.5)


def test_the_bootstrap_is_reproducible_with_its_seed_and_moves_with_another():
    tasks = [(float(i % 7 + 1), float(i % 5 + 1)) for i in range(30)]
    first = cluster_bootstrap(tasks, {"r": _ratio}, resamples=1000, seed=7)["r"]
    again = cluster_bootstrap(tasks, {"r": _ratio}, resamples=1000, seed=7)["r"]
    other = cluster_bootstrap(tasks, {"r": _ratio}, resamples=1000, seed=8)["r"]
    assert first == again
    assert (other.low, other.high) != (first.low, first.high)
    assert first.low < first.point < first.high


def test_undefined_resamples_are_counted_and_left_out():
    # t1 = (1, 0), t2 = (1, 1): only (t1, t1) has B's dollars at 0 (prob 1/4): undefined.
    found = cluster_bootstrap([(1.0, 0.0), (1.0, 1.0)], {"r": _maybe}, resamples=4000)["r"]
    assert 800 < found.undefined < 1200
    assert (found.low, found.high) == (1.0, 2.0)  # (t2, t2) -> 2/2; mixed -> 2/1


def _maybe(sample):
    b = sum(b for _, b in sample)
    return sum(a for a, _ in sample) / b if b else None


def _row(task: str, who: str, passed: bool, dollars: float, attempt: int = 0) -> ResultRow:
    return ResultRow(
        task=task,
        suite=task.split("/")[0],
        contestant=who,
        contestant_kind="policy",
        attempt=attempt,
        passed=passed,
        outcome="done",
        dollars_low=dollars,
        dollars_high=dollars,
    )


def test_a_paired_comparison_by_hand():
    # Four tasks. A passes t1, t2, t3; B passes t1, t4. Discordant: t2, t3 (only A), t4 (only B):
    # McNemar n = 3, min = 1: p = 2 * (1 + 3) / 8 = 1.0. Pass rates 3/4 - 2/4 = +0.25.
    # Dollars: A spends 1, 1, 1, 1 = 4; B spends 2, 2, 2, 2 = 8: ratio of dollars per task run
    # 1/2 = 0.5, and every resample has the same ratio, so the interval is [0.5, 0.5].
    rows = [
        _row("s/t1", "A", True, 1.0),
        _row("s/t2", "A", True, 1.0),
        _row("s/t3", "A", True, 1.0),
        _row("s/t4", "A", False, 1.0),
        _row("s/t1", "B", True, 2.0),
        _row("s/t2", "B", False, 2.0),
        _row("s/t3", "B", False, 2.0),
        _row("s/t4", "B", True, 2.0),
    ]
    c = compare("A", "B", rows, resamples=1000)
    assert (c["tasks"], c["pairs"]) == (4, 4)
    assert c["passed_only_by_a"] == ["s/t2", "s/t3"] and c["passed_only_by_b"] == ["s/t4"]
    assert c["mcnemar_p"] == 1.0
    assert c["pass_rate_difference"]["point"] == 0.25
    assert (c["dollars_ratio"]["point"], c["dollars_ratio"]["low"]) == (0.5, 0.5)
    assert c["dollars_ratio"]["high"] == 0.5


def test_only_tasks_both_contestants_ran_are_compared():
    rows = [_row("s/t1", "A", True, 1.0), _row("s/t1", "B", False, 1.0), _row("s/t2", "A", True, 9)]
    c = compare("A", "B", rows, resamples=100)
    assert c["tasks"] == 1 and c["dollars_ratio"]["point"] == 1.0
