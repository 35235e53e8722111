"""bench/gates: impacted tests first against the full suite.

`gates.speedup` reads bench/gates/bench.py's packaging run (results.csv, summary.json);
`gates.inrun` reads bench/gates/inrun.py's runs inside a real `ssw run` worktree, one pair of
results-<project>.csv and summary-<project>.json per project. The figures are recomputed from
the rows, one per seeded mutation; each summary must agree with its rows to its own rounding, and
gives what the rows do not (the project, when it was measured). A row's own ratio is checked
against its times (packaging) or not read at all (in-run: the ratios come from the times), so no
ratio is trusted as typed (ADR 0026)."""

from __future__ import annotations

import statistics
from typing import Any

from stepswitch.claims.inputs import (
    EvidenceError,
    Inputs,
    Unprovable,
    agree,
    field_of,
    number_of,
)
from stepswitch.claims.metrics.base import Computed, Metric
from stepswitch.claims.metrics.bench import committed_tree
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


# bench/gates/bench.py keeps each row's times and ratio to 3 decimals, the ratio worked out from
# the unrounded times.
ROW_ROUNDING = 0.0005


def _ratio_agrees(rel: str, line: int, ratio: float, full_s: float, impacted_s: float) -> None:
    """A row's `ratio` is its full suite's time over impacted first's: not trusted as typed, it
    must lie within what its rounded times allow."""
    h = ROW_ROUNDING
    if impacted_s <= h:
        raise EvidenceError(f"{rel}:{line}: impacted_first_verdict_s is not positive")
    low, high = (full_s - h) / (impacted_s + h), (full_s + h) / (impacted_s - h)
    if not low - h - 1e-12 <= ratio <= high + h + 1e-12:
        raise Unprovable(
            f"{rel}:{line}: ratio is {ratio:g}, but full_first_verdict_s / "
            f"impacted_first_verdict_s give {full_s / impacted_s:.3f} (their rounding allows "
            f"{low:.3f} to {high:.3f})"
        )


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
        _ratio_agrees(rows_rel, line, ratios[-1], full[-1], impacted[-1])
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
            "measured_commit": _commit_of(inputs, summary, summary_rel, when),
            "project": str(field_of(summary, summary_rel, "project")),
            "version": str(field_of(summary, summary_rel, "version")),
            "tests": int(number_of(summary, summary_rel, "tests_collected")),
            "test_files": int(number_of(summary, summary_rel, "test_files")),
            "measured_on": when[:10],
            **values,
        }
    )


def _commit_of(inputs: Inputs, summary: Any, rel: str, when: str) -> str:
    """The ssw commit a summary was measured at (its first 12 digits), refused when its tree had
    uncommitted changes or the summary cannot say (ADR 0028); noted with its date (`when`)."""
    dirty = summary.get("stepswitch_dirty") if isinstance(summary, dict) else None
    committed_tree(inputs, rel, "stepswitch_dirty", dirty)
    commit = field_of(summary, rel, "stepswitch_commit")
    if not isinstance(commit, str) or len(commit) < 12:
        raise EvidenceError(f"{rel}: stepswitch_commit is not a commit: {commit!r}")
    inputs.made_at(rel, commit, when)
    return commit[:12]


def _median_spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _inrun_project(
    inputs: Inputs, summary_rel: str, rows_rel: str, prefix: str = ""
) -> dict[str, Any]:
    """One project's in-run figures, recomputed from its rows and checked against its summary;
    `prefix` "run_": the columns of the in-process gate runs with the warm pytest."""
    summary: Any = inputs.json(summary_rel)
    project = str(field_of(summary, summary_rel, "project"))
    if f"results-{project}.csv" != rows_rel.rsplit("/", 1)[-1]:
        raise EvidenceError(f"{summary_rel} is for {project}, but its rows are {rows_rel}")
    rows = inputs.csv_rows(rows_rel)
    if not rows:
        raise EvidenceError(f"{rows_rel} has no rows")
    vs_x: list[float] = []
    vs_full: list[float] = []
    missed = 0
    for line, row in enumerate(rows, start=2):
        if not _flag(row, rows_rel, line, f"{prefix}caught"):
            missed += 1
            continue
        # The ratios from the raw times, not from the rows' own ratio columns.
        first = _number(row, rows_rel, line, f"{prefix}first_failing_verdict_s")
        if first <= 0:
            raise EvidenceError(
                f"{rows_rel}:{line}: {prefix}first_failing_verdict_s is not positive"
            )
        vs_x.append(_number(row, rows_rel, line, "full_x_s") / first)
        vs_full.append(_number(row, rows_rel, line, "full_s") / first)
    if not vs_x:
        raise Unprovable(f"{rows_rel}: no mutation was caught, so there is no ratio")
    agree(summary_rel, "mutations", len(rows), number_of(summary, summary_rel, "mutations"), 0.0)
    stored_missed = number_of(summary, summary_rel, f"{prefix}missed")
    agree(summary_rel, f"{prefix}missed", missed, stored_missed, 0.0)
    spreads = {"ratio_vs_full_x": _median_spread(vs_x), "ratio_vs_full": _median_spread(vs_full)}
    for key, spread in spreads.items():
        for stat, recomputed in spread.items():
            # The summary's ratios are rounded to 2 decimals and come from unrounded times.
            stored = number_of(summary, summary_rel, prefix + key, stat)
            agree(summary_rel, f"{prefix}{key}.{stat}", recomputed, stored, 0.01 + 0.002 * stored)
    when = str(field_of(summary, summary_rel, "measured"))
    inputs.measured_at(summary_rel, when)
    return {
        "measured_commit": _commit_of(inputs, summary, summary_rel, when),
        "project": project,
        "version": str(field_of(summary, summary_rel, "version")),
        "measured": when,
        "mutations": len(rows),
        "missed": missed,
        **{f"{key}_{stat}": round(v, 4) for key, s in spreads.items() for stat, v in s.items()},
    }


def inrun(inputs: Inputs, prefix: str = "") -> Computed:
    """The in-run benchmark over every project named: the worst project's median ratios (every
    project must meet a bound on them), the missed failures of all, the fewest mutations; of
    the `ssw gates` command, or with `prefix` "run_" of the gate runs as `ssw run` makes them."""
    summaries, results = inputs.paths("summaries"), inputs.paths("results")
    if len(summaries) != len(results) or not summaries:
        raise EvidenceError(
            f"evidence.summaries ({len(summaries)}) and evidence.results ({len(results)}) must "
            "name the same projects, in the same order"
        )
    projects = [
        _inrun_project(inputs, s, r, prefix) for s, r in zip(summaries, results, strict=True)
    ]
    names = [p["project"] for p in projects]
    if len(set(names)) != len(names):
        raise EvidenceError(f"a project is named twice: {', '.join(names)}")
    per_project = "; ".join(
        f"{p['project']} {p['ratio_vs_full_x_median']:.2f}x and {p['ratio_vs_full_median']:.2f}x"
        f" over {p['mutations']} mutations, {p['missed']} missed"
        for p in projects
    )
    return Computed(
        {
            "projects": len(projects),
            "project_names": ", ".join(names),
            "per_project": per_project,
            "measured_on": max(str(p["measured"]) for p in projects)[:10],
            "measured_commit": ", ".join(sorted({str(p["measured_commit"]) for p in projects})),
            "mutations": sum(int(p["mutations"]) for p in projects),
            "fewest_mutations": min(int(p["mutations"]) for p in projects),
            "worst_median_ratio_x": min(float(p["ratio_vs_full_x_median"]) for p in projects),
            "worst_median_ratio_full": min(float(p["ratio_vs_full_median"]) for p in projects),
            "worst_min_ratio_x": min(float(p["ratio_vs_full_x_min"]) for p in projects),
            "missed": sum(int(p["missed"]) for p in projects),
        },
        details=projects,
    )


def inrun_warm(inputs: Inputs) -> Computed:
    """`inrun` of the in-process gate runs: stages forked from the warm pytest (`gates.warm`)."""
    return inrun(inputs, "run_")


RATIO = times(2)
SECONDS = fixed(3)
INRUN_FIELDS = {
    "projects": INT,
    "project_names": TEXT,
    "per_project": TEXT,
    "measured_on": TEXT,
    "measured_commit": TEXT,
    "mutations": INT,
    "fewest_mutations": INT,
    "worst_median_ratio_x": RATIO,
    "worst_median_ratio_full": RATIO,
    "worst_min_ratio_x": RATIO,
    "missed": INT,
}

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
            "measured_commit": TEXT,
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
    Metric(
        "gates.inrun",
        ("summaries", "results"),
        INRUN_FIELDS,
        inrun,
        "inside a real ssw run worktree, per project: the project's full suite (with pytest -x and"
        " without) over `ssw gates --changed`'s first failing verdict, and missed failures",
    ),
    Metric(
        "gates.inrun_warm",
        ("summaries", "results"),
        INRUN_FIELDS,
        inrun_warm,
        "inside a real ssw run worktree, per project: the project's full suite (with pytest -x and"
        " without) over the first failing verdict of the gate runs as ssw run makes them (the"
        " warm pytest), and missed failures",
    ),
)
