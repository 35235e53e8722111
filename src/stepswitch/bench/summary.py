"""summary.json: per contestant and suite, what a task run cost and how often it passed; between
each two contestants on the tasks both ran, the paired figures with their intervals.

Every task run counts in every denominator: harness errors and runs the bench lost are failures
with dollars, never left out. Dollars are [low, high]: equal unless some usage was lost.
Between A and B (over tasks both ran, tasks resampled as clusters, `stats.SEED`):
- dollars ratio: A's dollars per task run / B's (low bounds; the high bounds' ratio beside it);
- pass-rate difference: A's pass rate - B's, in points of a share (0.1 = 10 points);
- tasks passed by one and not the other (pairs of the same task and attempt) and McNemar's
  exact p-value on those pairs.

The file's model is `SummaryFile` (bench/files/): `summary_file` makes one, and every summary
the bench writes or prints went through it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec

from stepswitch.bench.contestants import LABELS
from stepswitch.bench.files import SummaryFile
from stepswitch.bench.results import ResultRow
from stepswitch.bench.stats import LEVEL, RESAMPLES, SEED, cluster_bootstrap, mcnemar_exact

SCHEMA_VERSION = 1
ALL = "all"

P = ParamSpec("P")


def _mean(total: float, n: int) -> float:
    return total / n if n else 0.0


def _shares(tables: list[dict[str, list[float]]]) -> dict[str, dict[str, float | None]]:
    summed: dict[str, list[float]] = {}
    for table in tables:
        for name, (low, high) in table.items():
            got = summed.setdefault(name, [0.0, 0.0])
            got[0] += low
            got[1] += high
    total_low = sum(v[0] for v in summed.values())
    return {
        name: {
            "low": round(low, 6),
            "high": round(high, 6),
            "share": round(low / total_low, 4) if total_low > 0 else None,
        }
        for name, (low, high) in sorted(summed.items(), key=lambda kv: -kv[1][1])
    }


def _outcomes(rows: Sequence[ResultRow]) -> dict[str, int]:
    found = sorted({r.outcome for r in rows})
    return {o: sum(r.outcome == o for r in rows) for o in found}


def group_stats(rows: Sequence[ResultRow]) -> dict[str, Any]:
    n = len(rows)
    passed = sum(r.passed for r in rows)
    low = sum(r.dollars_low for r in rows)
    high = sum(r.dollars_high for r in rows)
    return {
        "task_runs": n,
        "passed": passed,
        "pass_rate": round(_mean(passed, n), 4),
        "harness_errors": sum(r.harness_error for r in rows),
        "outcomes": _outcomes(rows),
        "dollars_total": {"low": round(low, 6), "high": round(high, 6)},
        "dollars_per_task_run": {"low": round(_mean(low, n), 6), "high": round(_mean(high, n), 6)},
        # What one passed task cost, every run's dollars counted; None when none passed.
        "dollars_per_passed_task": (
            {"low": round(low / passed, 6), "high": round(high / passed, 6)} if passed else None
        ),
        # The share of the dollars spent on runs that did not end `done`: paid for no change
        # that could be taken. None when nothing was spent.
        "not_done_dollars_share": (
            round(sum(r.dollars_high for r in rows if r.outcome != "done") / high, 4)
            if high > 0
            else None
        ),
        "unpriced_steps": sum(r.unpriced_steps for r in rows),
        "tokens_per_task_run": round(_mean(sum(r.tokens for r in rows), n), 1),
        "cached_tokens_per_task_run": round(_mean(sum(r.cached_tokens for r in rows), n), 1),
        "uncached_tokens_per_task_run": round(_mean(sum(r.uncached_tokens for r in rows), n), 1),
        "minutes_per_task_run": round(_mean(sum(r.minutes for r in rows), n), 4),
        "steps_per_task_run": round(_mean(sum(r.steps for r in rows), n), 2),
        "escalations": sum(r.escalations for r in rows),
        "escalations_per_task_run": round(_mean(sum(r.escalations for r in rows), n), 3),
        "refused_tool_calls": sum(r.refused_tool_calls for r in rows),
        "model_output_failures": sum(r.model_output_failures for r in rows),
        "served_other_model": sum(r.served_other_model for r in rows),
        "dollars_by_model": _shares([r.dollars_by_model for r in rows]),
        "dollars_by_step_type": _shares([r.dollars_by_step_type for r in rows]),
    }


@dataclass(frozen=True)
class TaskPair:
    """One task's runs by A and by B: the bootstrap's cluster."""

    task: str
    a_low: float
    a_high: float
    a_runs: int
    a_passed: int
    b_low: float
    b_high: float
    b_runs: int
    b_passed: int


def _ratio(sample: Sequence[TaskPair], high: bool) -> float | None:
    if not sample:
        return None
    a = sum(p.a_high if high else p.a_low for p in sample) / sum(p.a_runs for p in sample)
    b = sum(p.b_high if high else p.b_low for p in sample) / sum(p.b_runs for p in sample)
    return a / b if b > 0 else None


def _difference(sample: Sequence[TaskPair]) -> float | None:
    if not sample:
        return None
    a = sum(p.a_passed for p in sample) / sum(p.a_runs for p in sample)
    b = sum(p.b_passed for p in sample) / sum(p.b_runs for p in sample)
    return a - b


def compare(
    a: str,
    b: str,
    rows: Sequence[ResultRow],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """A against B on the tasks both ran."""
    mine = {n: [r for r in rows if r.contestant == n] for n in (a, b)}
    tasks = sorted({r.task for r in mine[a]} & {r.task for r in mine[b]})
    pairs = []
    for task in tasks:
        ra = [r for r in mine[a] if r.task == task]
        rb = [r for r in mine[b] if r.task == task]
        pairs.append(
            TaskPair(
                task,
                sum(r.dollars_low for r in ra),
                sum(r.dollars_high for r in ra),
                len(ra),
                sum(r.passed for r in ra),
                sum(r.dollars_low for r in rb),
                sum(r.dollars_high for r in rb),
                len(rb),
                sum(r.passed for r in rb),
            )
        )
    by_run = {(r.contestant, r.task, r.attempt): r.passed for r in rows}
    only_a, only_b = [], []
    matched = 0
    for (name, task, attempt), passed in sorted(by_run.items()):
        if name != a or (b, task, attempt) not in by_run:
            continue
        matched += 1
        other = by_run[(b, task, attempt)]
        if passed and not other:
            only_a.append(task if attempt == 0 else f"{task}#{attempt}")
        elif other and not passed:
            only_b.append(task if attempt == 0 else f"{task}#{attempt}")
    intervals = cluster_bootstrap(
        pairs,
        {
            "ratio": lambda s: _ratio(s, high=False),
            "ratio_high": lambda s: _ratio(s, high=True),
            "difference": _difference,
        },
        resamples=resamples if pairs else 0,
        seed=seed,
    )
    return {
        "a": a,
        "b": b,
        "tasks": len(pairs),
        "pairs": matched,
        "dollars_ratio": intervals["ratio"].as_dict(),
        "dollars_ratio_high_bounds": intervals["ratio_high"].as_dict(),
        "pass_rate_difference": intervals["difference"].as_dict(),
        "passed_only_by_a": only_a,
        "passed_only_by_b": only_b,
        "mcnemar_p": mcnemar_exact(len(only_a), len(only_b)),
    }


def _paired(comparisons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The overall comparisons as flat estimate-and-interval entries (for the replay page)."""
    out = []
    for c in comparisons:
        if c["suite"] != ALL:
            continue
        for metric, key in (
            ("dollars per task run, ratio a / b", "dollars_ratio"),
            ("pass rate, difference a - b", "pass_rate_difference"),
        ):
            i = c[key]
            out.append(
                {
                    "a": c["a"],
                    "b": c["b"],
                    "metric": metric,
                    "estimate": i["point"],
                    "low": i["low"],
                    "high": i["high"],
                    "level": LEVEL,
                    "n": c["tasks"],
                    "method": "cluster bootstrap over tasks",
                }
            )
    return out


def summary_file(
    rows: Sequence[ResultRow],
    *,
    bench_id: str,
    contestants: Sequence[tuple[str, str]],  # (name, kind), in the bench's order
    planned: int,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> SummaryFile:
    suites = sorted({r.suite for r in rows})
    names = [name for name, _ in contestants]
    per: dict[str, Any] = {}
    for name, kind in contestants:
        mine = [r for r in rows if r.contestant == name]
        per[name] = {
            "kind": kind,
            "label": LABELS.get(kind, kind),
            ALL: group_stats(mine),
            "suites": {s: group_stats([r for r in mine if r.suite == s]) for s in suites},
        }
    comparisons = []
    for a, b in itertools.combinations(names, 2):
        for suite in [ALL, *suites] if len(suites) > 1 else [ALL]:
            chosen = [r for r in rows if suite == ALL or r.suite == suite]
            result = compare(a, b, chosen, resamples=resamples, seed=seed)
            comparisons.append({"suite": suite, **result})
    served = [
        {
            "task": r.task,
            "contestant": r.contestant,
            "attempt": r.attempt,
            "requested_to_served": r.served_models,
        }
        for r in sorted(rows, key=lambda r: (r.task, r.contestant, r.attempt))
        if r.served_other_model
    ]
    summary = {
        "schema_version": SCHEMA_VERSION,
        "bench_id": bench_id,
        "complete": len(rows) >= planned,
        "planned_task_runs": planned,
        "task_runs": len(rows),
        "harness_errors": sum(r.harness_error for r in rows),
        "method": {
            "bootstrap": "percentile interval; tasks resampled with replacement as clusters",
            "resamples": resamples,
            "seed": seed,
            "level": LEVEL,
            "mcnemar": "exact, two-sided binomial test on pairs (task, attempt) that disagree",
            "dollars": "ratio of dollars per task run, A / B, on low bounds",
        },
        "contestants": per,
        "comparisons": comparisons,
        "paired": _paired(comparisons),
        "served_other_model": served,
    }
    return SummaryFile.model_validate(summary)


def _as_json(make: Callable[P, SummaryFile]) -> Callable[P, dict[str, Any]]:
    """`make`, with its SummaryFile given as JSON data."""

    def as_json(*args: P.args, **kwargs: P.kwargs) -> dict[str, Any]:
        return make(*args, **kwargs).model_dump(mode="json")

    return as_json


# summary.json's content, as JSON data: `summary_file`'s, with its arguments.
summarize = _as_json(summary_file)
