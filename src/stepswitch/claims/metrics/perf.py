"""bench/perf/results.json (written by bench/perf/run_all.py): the harness against mini-swe-agent.

Where the file keeps every repetition, the figures are recomputed from the repetitions and the
stored summary must agree with them; where it keeps only a summary (cold start, first call), the
summary is read as written."""

from __future__ import annotations

import statistics
from typing import Any

from stepswitch.claims.inputs import EvidenceError, Inputs, agree, field_of, number_of
from stepswitch.claims.metrics.base import Computed, Metric
from stepswitch.claims.numbers import INT, TEXT, Fmt, Value, fixed, pct

MEASURED: dict[str, Fmt] = {
    "measured_on": TEXT,
    "measured_commit": TEXT,
    "mini_version": TEXT,
}


def _measured(inputs: Inputs, rel: str, data: Any) -> dict[str, Value]:
    when = field_of(data, rel, "date")
    if not isinstance(when, str):
        raise EvidenceError(f"{rel}: date is not text: {when!r}")
    inputs.measured_at(rel, when)
    return {
        "measured_on": when[:10],
        "measured_commit": str(field_of(data, rel, "machine", "stepswitch_commit")),
        "mini_version": str(field_of(data, rel, "mini_swe_agent")),
    }


def _per_run(data: Any, rel: str, side: str, key: str) -> list[float]:
    runs = field_of(data, rel, "overhead", f"{side}_runs")
    if not isinstance(runs, list) or not runs:
        raise EvidenceError(f"{rel}: overhead.{side}_runs is not a list of repetitions")
    return [number_of(run, f"{rel}: overhead.{side}_runs[{i}]", key) for i, run in enumerate(runs)]


def _summary(data: Any, rel: str, *keys: str) -> tuple[float, float, float, int]:
    return (
        number_of(data, rel, *keys, "median"),
        number_of(data, rel, *keys, "min"),
        number_of(data, rel, *keys, "max"),
        int(number_of(data, rel, *keys, "n")),
    )


def overhead(inputs: Inputs) -> Computed:
    rel = inputs.one("results")
    data = inputs.json(rel)
    ssw = _per_run(data, rel, "ssw", "overhead_per_step_ms")
    mini = _per_run(data, rel, "mini", "overhead_per_step_ms")
    if len(ssw) != len(mini):
        raise EvidenceError(f"{rel}: {len(ssw)} ssw repetitions but {len(mini)} of mini")
    ssw_ms, mini_ms = statistics.median(ssw), statistics.median(mini)
    pairs = [s / m for s, m in zip(ssw, mini, strict=True)]
    for side, median in (("ssw", ssw_ms), ("mini", mini_ms)):
        key = f"{side}_overhead_per_step_ms"
        stored = number_of(data, rel, "overhead", key, "median")
        agree(rel, f"overhead.{key}.median", median, stored, 0.0)
    agree(
        rel,
        "overhead.ratio_of_medians",
        ssw_ms / mini_ms,
        number_of(data, rel, "overhead", "ratio_of_medians"),
        0.0,
    )
    after_ssw = statistics.median(_per_run(data, rel, "ssw", "after_first_request_per_step_ms"))
    after_mini = statistics.median(_per_run(data, rel, "mini", "after_first_request_per_step_ms"))
    return Computed(
        {
            **_measured(inputs, rel, data),
            "steps": int(number_of(data, rel, "steps")),
            "reps": len(ssw),
            "ssw_ms": ssw_ms,
            "ssw_ms_min": min(ssw),
            "ssw_ms_max": max(ssw),
            "mini_ms": mini_ms,
            "mini_ms_min": min(mini),
            "mini_ms_max": max(mini),
            "ratio": ssw_ms / mini_ms,
            "ratio_pair_min": min(pairs),
            "ratio_pair_max": max(pairs),
            "ssw_after_first_ms": after_ssw,
            "mini_after_first_ms": after_mini,
        }
    )


def cold_start(inputs: Inputs) -> Computed:
    rel = inputs.one("results")
    data = inputs.json(rel)
    ssw, ssw_min, ssw_max, n = _summary(data, rel, "cold_start", "ssw_help_s")
    mini, _, _, _ = _summary(data, rel, "cold_start", "mini_help_s")
    return Computed(
        {
            **_measured(inputs, rel, data),
            "help_reps": n,
            "ssw_help_ms": ssw * 1000,
            "ssw_help_ms_min": ssw_min * 1000,
            "ssw_help_ms_max": ssw_max * 1000,
            "mini_help_ms": mini * 1000,
        }
    )


def sandbox(inputs: Inputs) -> Computed:
    """What confining the agent's and the gates' commands costs, from the ssw repetitions: the
    sandbox each ran under, one wrapper start per command (measured in the repetition), how many
    commands ran confined, and the cost per step that C-005's overhead already includes."""
    rel = inputs.one("results")
    data = inputs.json(rel)
    runs = field_of(data, rel, "overhead", "ssw_runs")
    if not isinstance(runs, list) or not runs:
        raise EvidenceError(f"{rel}: overhead.ssw_runs is not a list of repetitions")
    names = [
        field_of(run, f"{rel}: overhead.ssw_runs[{i}]", "sandbox") for i, run in enumerate(runs)
    ]
    per_command = _per_run(data, rel, "ssw", "sandbox_per_command_ms")
    gate_commands = _per_run(data, rel, "ssw", "sandboxed_gate_commands")
    tool_commands = [
        len(field_of(run, f"{rel}: overhead.ssw_runs[{i}]", "run_tool_direct"))
        for i, run in enumerate(runs)
    ]
    steps = _per_run(data, rel, "ssw", "steps")
    per_step = [
        c * (g + t) / n
        for c, g, t, n in zip(per_command, gate_commands, tool_commands, steps, strict=True)
    ]
    ssw = _per_run(data, rel, "ssw", "overhead_per_step_ms")
    mini = _per_run(data, rel, "mini", "overhead_per_step_ms")
    return Computed(
        {
            **_measured(inputs, rel, data),
            "reps": len(runs),
            "confined_reps": sum(1 for n in names if n != "none"),
            "unconfined_reps": sum(1 for n in names if n == "none"),
            "sandbox": ", ".join(sorted({str(n) for n in names})),
            "sandbox_per_command_ms": statistics.median(per_command),
            "sandboxed_commands": int(
                statistics.median(
                    [g + t for g, t in zip(gate_commands, tool_commands, strict=True)]
                )
            ),
            "sandbox_per_step_ms": statistics.median(per_step),
            "ratio": statistics.median(ssw) / statistics.median(mini),
        }
    )


def first_call(inputs: Inputs) -> Computed:
    rel = inputs.one("results")
    data = inputs.json(rel)
    first, first_min, first_max, n = _summary(
        data, rel, "first_call", "ssw_launch_to_first_request_s"
    )
    mini_first, _, _, _ = _summary(data, rel, "first_call", "mini_launch_to_first_request_s")
    return Computed(
        {
            **_measured(inputs, rel, data),
            "first_call_reps": n,
            "ssw_first_call_ms": first * 1000,
            "ssw_first_call_ms_min": first_min * 1000,
            "ssw_first_call_ms_max": first_max * 1000,
            "mini_first_call_ms": mini_first * 1000,
        }
    )


def prompt_economy(inputs: Inputs) -> Computed:
    rel = inputs.one("results")
    data = inputs.json(rel)
    steps = field_of(data, rel, "prompt", "per_step")
    if not isinstance(steps, list) or not steps:
        raise EvidenceError(f"{rel}: prompt.per_step is not a list of steps")
    where = f"{rel}: prompt.per_step"
    tokens = [int(number_of(s, where, "prompt_tokens")) for s in steps]
    cached = [int(number_of(s, where, "cached_tokens")) for s in steps]
    shares = [number_of(s, where, "repeat_share") for s in steps]
    history = sum(int(number_of(s, where, "full_history_tokens")) for s in steps)
    total, uncached = sum(tokens), sum(tokens) - sum(cached)
    stored = {
        "prompt_tokens_total": total,
        "uncached_tokens_total": uncached,
        "full_history_prompt_tokens_total": history,
    }
    for key, recomputed in stored.items():
        agree(rel, f"prompt.{key}", recomputed, number_of(data, rel, "prompt", key), 0.0)
    median = number_of(data, rel, "prompt", "repeat_share_per_step", "median")
    weighted = number_of(data, rel, "prompt", "repeat_share_token_weighted")
    mean = number_of(data, rel, "prompt", "repeat_share_mean")
    # per_step keeps each share to 4 decimals: the summary must agree to that rounding.
    agree(rel, "prompt.repeat_share_per_step.median", statistics.median(shares), median, 1e-4)
    agree(rel, "prompt.repeat_share_mean", statistics.fmean(shares), mean, 1e-4)
    by_tokens = sum(s * t for s, t in zip(shares, tokens, strict=True)) / total
    agree(rel, "prompt.repeat_share_token_weighted", by_tokens, weighted, 1e-4)
    return Computed(
        {
            **_measured(inputs, rel, data),
            "prompt_steps": len(steps),
            "repeat_median": median,
            "repeat_weighted": weighted,
            "repeat_mean": mean,
            "prompt_tokens": total,
            "uncached_tokens": uncached,
            "full_history_tokens": history,
            "uncached_vs_full": uncached / history,
            "mini_prompt_tokens": int(number_of(data, rel, "prompt", "mini_prompt_tokens_total")),
            "mini_uncached_tokens": int(
                number_of(data, rel, "prompt", "mini_uncached_tokens_total")
            ),
        }
    )


MS = fixed(1)
RATIO = fixed(2)

METRICS = (
    Metric(
        "perf.overhead",
        ("results",),
        {
            **MEASURED,
            "steps": INT,
            "reps": INT,
            "ssw_ms": MS,
            "ssw_ms_min": MS,
            "ssw_ms_max": MS,
            "mini_ms": MS,
            "mini_ms_min": MS,
            "mini_ms_max": MS,
            "ratio": RATIO,
            "ratio_pair_min": RATIO,
            "ratio_pair_max": RATIO,
            "ssw_after_first_ms": MS,
            "mini_after_first_ms": MS,
        },
        overhead,
        "harness overhead per step, ms (medians of the repetitions) and ssw/mini",
    ),
    Metric(
        "perf.cold_start",
        ("results",),
        {
            **MEASURED,
            "help_reps": INT,
            "ssw_help_ms": MS,
            "ssw_help_ms_min": MS,
            "ssw_help_ms_max": MS,
            "mini_help_ms": MS,
        },
        cold_start,
        "`--help` in a fresh process, ms (median, min, max)",
    ),
    Metric(
        "perf.sandbox",
        ("results",),
        {
            **MEASURED,
            "reps": INT,
            "confined_reps": INT,
            "unconfined_reps": INT,
            "sandbox": TEXT,
            "sandbox_per_command_ms": MS,
            "sandboxed_commands": INT,
            "sandbox_per_step_ms": fixed(2),
            "ratio": RATIO,
        },
        sandbox,
        "the sandbox's cost per command and per step in the ssw runs, and the overhead ratio",
    ),
    Metric(
        "perf.first_call",
        ("results",),
        {
            **MEASURED,
            "first_call_reps": INT,
            "ssw_first_call_ms": MS,
            "ssw_first_call_ms_min": MS,
            "ssw_first_call_ms_max": MS,
            "mini_first_call_ms": MS,
        },
        first_call,
        "launch to the first model request, ms (median, min, max)",
    ),
    Metric(
        "perf.prompt_economy",
        ("results",),
        {
            **MEASURED,
            "prompt_steps": INT,
            "repeat_median": pct(1),
            "repeat_weighted": pct(1),
            "repeat_mean": pct(1),
            "prompt_tokens": INT,
            "uncached_tokens": INT,
            "full_history_tokens": INT,
            "uncached_vs_full": pct(1),
            "mini_prompt_tokens": INT,
            "mini_uncached_tokens": INT,
        },
        prompt_economy,
        "prompt repeat share per step and uncached tokens against full history",
    ),
)
