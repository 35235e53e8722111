"""The text of a bench summary: one line per contestant and suite, then each comparison."""

from __future__ import annotations

from typing import Any

from stepswitch.records.money import format_usd

HEADER = (
    f"{'contestant':<22} {'suite':<12} {'runs':>5} {'passed':>7} {'harness':>7} "
    f"{'$ per run':>17} {'tokens/run':>10} {'uncached':>9} {'min/run':>7} {'escal.':>6} "
    f"{'refused':>7}"
)


def _usd(pair: dict[str, float]) -> str:
    return format_usd(pair["low"], pair["high"])


def _line(name: str, suite: str, s: dict[str, Any]) -> str:
    rate = f"{100 * s['pass_rate']:.1f}%"
    return (
        f"{name:<22} {suite:<12} {s['task_runs']:>5} {rate:>7} {s['harness_errors']:>7} "
        f"{_usd(s['dollars_per_task_run']):>17} {s['tokens_per_task_run']:>10,.0f} "
        f"{s['uncached_tokens_per_task_run']:>9,.0f} {s['minutes_per_task_run']:>7.2f} "
        f"{s['escalations']:>6} {s['refused_tool_calls']:>7}"
    )


def _interval(i: dict[str, Any], fmt: str, unit: str = "") -> str:
    if i["point"] is None:
        return "n/a"
    point = format(i["point"], fmt) + unit
    if i["low"] is None:
        return point
    return f"{point} [95%: {format(i['low'], fmt)}{unit}, {format(i['high'], fmt)}{unit}]"


def _comparison(c: dict[str, Any]) -> list[str]:
    a, b = c["a"], c["b"]
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
        f"{a} vs {b} ({c['suite']}, {c['tasks']} tasks): {dollars}",
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
        HEADER,
    ]
    notes = []
    for name, per in summary["contestants"].items():
        lines.append(_line(name, "all", per["all"]))
        if len(per["suites"]) > 1:
            lines += [_line("", suite, s) for suite, s in per["suites"].items()]
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
    if notes:
        lines += ["", *notes]
    if summary["comparisons"]:
        lines.append("")
        for c in summary["comparisons"]:
            lines += _comparison(c)
    served = summary["served_other_model"]
    if served:
        lines += ["", f"{len(served)} task run(s) were served another model than requested:"]
        lines += [
            f"  {s['task']} {s['contestant']}#{s['attempt']}: "
            + ", ".join(f"{k} -> {v}" for k, v in s["requested_to_served"].items())
            for s in served
        ]
    return "\n".join(lines)
