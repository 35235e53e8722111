"""bench/gates (written by bench/gates/bench.py): impacted tests first against the full suite.

The figures are recomputed from results.csv, one row per seeded mutation; summary.json must agree
with them to its own rounding, and gives what the rows do not (the project, its test count)."""

from __future__ import annotations

import statistics
from typing import Any

from stepswitch.claims.inputs import EvidenceError, Inputs, agree, field_of, number_of
from stepswitch.claims.metrics.base import Computed, Metric
from stepswitch.claims.numbers import INT, TEXT, fixed, times

_BOOL = {"True": True, "False": False, "true": True, "false": False}


def _number(row: dict[str, str], rel: str, line: int, key: str) -> float:
    text = row.get(key)
    try:
        return float(text or "")
    except ValueError:
        raise EvidenceError(f"{rel}:{line}: {key} is not a number: {text!r}") from None


def _flag(row: dict[str, str], rel: str, line: int, key: str, empty: bool | None = None) -> bool:
    text = row.get(key)
    if text == "" and empty is not None:
        return empty
    if text not in _BOOL:
        raise EvidenceError(f"{rel}:{line}: {key} is not True or False: {text!r}")
    return _BOOL[text]


def speedup(inputs: Inputs) -> Computed:
    summary_rel, rows_rel = inputs.one("summary"), inputs.one("results")
    summary: Any = inputs.json(summary_rel)
    rows = inputs.csv_rows(rows_rel)
    if not rows:
        raise EvidenceError(f"{rows_rel} has no rows")
    ratios, impacted, full = [], [], []
    missed = missed_after = whole = 0
    for line, row in enumerate(rows, start=2):
        ratios.append(_number(row, rows_rel, line, "ratio"))
        impacted.append(_number(row, rows_rel, line, "impacted_first_verdict_s"))
        full.append(_number(row, rows_rel, line, "full_first_verdict_s"))
        if _flag(row, rows_rel, line, "missed_by_impacted"):
            missed += 1
            missed_after += not _flag(row, rows_rel, line, "caught_by_full_stage", empty=False)
        selected = _number(row, rows_rel, line, "selected_files")
        whole += selected >= _number(row, rows_rel, line, "total_test_files")
    values = {
        "mutations": len(rows),
        "median_ratio": statistics.median(ratios),
        "min_ratio": min(ratios),
        "max_ratio": max(ratios),
        "impacted_median_s": statistics.median(impacted),
        "full_median_s": statistics.median(full),
        "whole_suite_selections": whole,
        "missed_by_impacted": missed,
        "missed_after_both": missed_after,
    }
    # summary.json rounds ratios to 2 decimals and times to 3.
    for key, stored, rounding in (
        ("mutations", ("mutations",), 0.0),
        ("median_ratio", ("ratio_full_over_impacted_first", "median"), 0.005),
        ("min_ratio", ("ratio_full_over_impacted_first", "min"), 0.005),
        ("max_ratio", ("ratio_full_over_impacted_first", "max"), 0.005),
        ("impacted_median_s", ("impacted_first_verdict_s", "median"), 0.0005),
        ("full_median_s", ("full_first_verdict_s", "median"), 0.0005),
        ("whole_suite_selections", ("selection_is_the_whole_suite",), 0.0),
        ("missed_by_impacted", ("missed_by_impacted_stage",), 0.0),
        ("missed_after_both", ("missed_after_both_stages",), 0.0),
    ):
        recomputed = values[key]
        assert not isinstance(recomputed, str)
        agree(
            summary_rel,
            ".".join(stored),
            recomputed,
            number_of(summary, summary_rel, *stored),
            rounding,
        )
    when = str(field_of(summary, summary_rel, "date"))
    inputs.measured_at(summary_rel, when)
    return Computed(
        {
            "project": str(field_of(summary, summary_rel, "project")),
            "version": str(field_of(summary, summary_rel, "version")),
            "tests": int(number_of(summary, summary_rel, "tests_collected")),
            "test_files": int(number_of(summary, summary_rel, "test_files")),
            "measured_on": when[:10],
            **values,
        }
    )


RATIO = times(2)
SECONDS = fixed(3)

METRICS = (
    Metric(
        "gates.speedup",
        ("summary", "results"),
        {
            "project": TEXT,
            "version": TEXT,
            "tests": INT,
            "test_files": INT,
            "measured_on": TEXT,
            "mutations": INT,
            "median_ratio": RATIO,
            "min_ratio": RATIO,
            "max_ratio": RATIO,
            "impacted_median_s": SECONDS,
            "full_median_s": SECONDS,
            "whole_suite_selections": INT,
            "missed_by_impacted": INT,
            "missed_after_both": INT,
        },
        speedup,
        "time to the first failing verdict, full suite over impacted first, and missed failures",
    ),
)
