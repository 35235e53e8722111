"""The text of a bench summary: one line per contestant and suite, then each comparison."""

from __future__ import annotations

from typing import Any

from stepswitch.bench.summary import ALL
from stepswitch.records.money import format_usd

# The per-contestant table's columns; all but the first two are numbers, aligned right.
COLUMNS = (
    "contestant",
    "suite",
    "runs",
    "passed",
    "harness",
    "$ per run",
    "$ per pass",
    "$ not done",
    "tokens/run",
    "uncached",
    "min/run",
    "escal.",
    "refused",
)
_TEXT_COLUMNS = 2


def _usd(pair: dict[str, float]) -> str:
    return format_usd(pair["low"], pair["high"])


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _cells(name: str, suite: str, s: dict[str, Any]) -> tuple[str, ...]:
    return (
        name,
        suite,
        str(s["task_runs"]),
        f"{100 * s['pass_rate']:.1f}%",
        str(s["harness_errors"]),
        _usd(s["dollars_per_task_run"]),
        _usd(s["dollars_per_passed_task"]) if s.get("dollars_per_passed_task") else "-",
        _share(s.get("not_done_dollars_share")),
        f"{s['tokens_per_task_run']:,.0f}",
        f"{s['uncached_tokens_per_task_run']:,.0f}",
        f"{s['minutes_per_task_run']:.2f}",
        str(s["escalations"]),
        str(s["refused_tool_calls"]),
    )


def render_table(rows: list[tuple[str, ...]]) -> list[str]:
    """COLUMNS over `rows`, each column as wide as its widest cell, two spaces between."""
    table = [COLUMNS, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    return [
        "  ".join(
            cell.ljust(w) if i < _TEXT_COLUMNS else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in table
    ]


def _interval(i: dict[str, Any], fmt: str, unit: str = "") -> str:
    if i["point"] is None:
        return "n/a"
    point = format(i["point"], fmt) + unit
    if i["low"] is None:
        return point
    return f"{point} [95%: {format(i['low'], fmt)}{unit}, {format(i['high'], fmt)}{unit}]"


def _comparison(c: dict[str, Any], all_label: str) -> list[str]:
    a, b = c["a"], c["b"]
    suite = all_label if c["suite"] == ALL else c["suite"]
    ratio = c["dollars_ratio"]
    dollars = (
        f"{a} costs {_interval(ratio, '.3f', 'x')} the dollars per task run of {b}"
        if ratio["point"] is not None
        else f"no dollars ratio ({b} spent $0)"
    )
    diff = dict(c["pass_rate_difference"])
    for k in ("point", "low", "high"):
        diff[k] = None if diff[k] is None else 100 * diff[k]
    return [
        f"{a} vs {b} ({suite}, {c['tasks']} tasks): {dollars}",
        f"  pass rate {a} - {b}: {_interval(diff, '+.1f', ' points')}; passed only by {a}: "
        f"{len(c['passed_only_by_a'])}, only by {b}: {len(c['passed_only_by_b'])} "
        f"(exact McNemar p = {c['mcnemar_p']:.3g})",
    ]


def render_summary(summary: dict[str, Any]) -> str:
    state = "complete" if summary["complete"] else "incomplete: the same command resumes it"
    lines = [
        f"bench {summary['bench_id']}: {summary['task_runs']} of "
        f"{summary['planned_task_runs']} task runs, {summary['harness_errors']} harness "
        f"error(s) ({state})",
        "",
    ]
    # A bench of one suite names it where the totals would say "all".
    suites = sorted({s for per in summary["contestants"].values() for s in per["suites"]})
    all_label = suites[0] if len(suites) == 1 else ALL
    rows = []
    notes = []
    for name, per in summary["contestants"].items():
        rows.append(_cells(name, all_label, per[ALL]))
        if len(per["suites"]) > 1:
            rows += [_cells("", suite, s) for suite, s in per["suites"].items()]
        if per["kind"] != "policy":
            notes.append(f"  {name}: {per['label']}")
        by_model = per["all"]["dollars_by_model"]
        if any(v["share"] for v in by_model.values()):
            shares = ", ".join(
                f"{m} {100 * v['share']:.0f}%" for m, v in by_model.items() if v["share"]
            )
            types = ", ".join(
                f"{t} {100 * v['share']:.0f}%"
                for t, v in per["all"]["dollars_by_step_type"].items()
                if v["share"]
            )
            notes.append(f"  {name}: dollars by model: {shares}; by step type: {types}")
    lines += render_table(rows)
    if notes:
        lines += ["", *notes]
    if summary["comparisons"]:
        lines.append("")
        for c in summary["comparisons"]:
            lines += _comparison(c, all_label)
    served = summary["served_other_model"]
    if served:
        lines += ["", f"{len(served)} task run(s) were served another model than requested:"]
        lines += [
            f"  {s['task']} {s['contestant']}#{s['attempt']}: "
            + ", ".join(f"{k} -> {v}" for k, v in s["requested_to_served"].items())
            for s in served
        ]
    return "\n".join(lines)
