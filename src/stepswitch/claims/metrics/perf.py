"""bench/perf/results.json (written by bench/perf/run_all.py): the harness against mini-swe-agent.

Every figure is recomputed from the raw samples the file keeps: each repetition's timed parts
(overhead per step from wall, command and server time), the fresh-process timings of cold start
and first call (`samples` beside their summary), the per-step prompt rows. No summary statistic is
read as typed: a stored median, min, max, count or ratio that is not what its samples give (to its
own rounding) makes the claim not proved, and a figure stored with no samples cannot prove one
(ADR 0026)."""

from __future__ import annotations

import statistics
from typing import Any

from stepswitch.claims.inputs import EvidenceError, Inputs, agree, field_of, number_of
from stepswitch.claims.metrics.base import Computed, Metric
from stepswitch.claims.metrics.perf_overhead import overhead
from stepswitch.claims.metrics.perf_prompt import prompt_economy
from stepswitch.claims.metrics.perf_results import MEASURED, measured, per_run, samples
from stepswitch.claims.numbers import INT, TEXT, fixed, pct


def _launch_times(inputs: Inputs, section: str, ssw_key: str, mini_key: str, name: str) -> Computed:
    """One section's launch timings, ssw's and mini's samples in seconds: how many, ssw's median,
    least and most, and mini's median, in milliseconds, named after `name`."""
    rel = inputs.one("results")
    data = inputs.json(rel)
    ssw = samples(data, rel, section, ssw_key)
    mini = samples(data, rel, section, mini_key)
    return Computed(
        {
            **measured(inputs, rel, data),
            f"{name}_reps": len(ssw),
            f"ssw_{name}_ms": statistics.median(ssw) * 1000,
            f"ssw_{name}_ms_min": min(ssw) * 1000,
            f"ssw_{name}_ms_max": max(ssw) * 1000,
            f"mini_{name}_ms": statistics.median(mini) * 1000,
        }
    )


def cold_start(inputs: Inputs) -> Computed:
    """The launch timings, and ssw's median as a share of mini's: the two measured side by side
    on one machine, which the absolute times alone do not compare."""
    times = _launch_times(inputs, "cold_start", "ssw_help_s", "mini_help_s", "help")
    ssw, mini = times.values["ssw_help_ms"], times.values["mini_help_ms"]
    assert isinstance(ssw, float) and isinstance(mini, float)
    return Computed({**times.values, "help_ratio": ssw / mini})


def _sandbox_start_agrees(run: Any, where: str, stored_ms: float) -> None:
    """Where a repetition keeps the wrapper starts it timed (`sandbox_start_samples_s`: `true`
    run directly and confined, alternating), its `sandbox_per_command_ms` must be their
    difference of medians (never below zero)."""
    if not isinstance(run, dict) or "sandbox_start_samples_s" not in run:
        return
    raw = field_of(run, where, "sandbox_start_samples_s")
    sides = {}
    for side in ("direct", "confined"):
        values = (
            field_of(raw, f"{where}: sandbox_start_samples_s", side)
            if isinstance(raw, dict)
            else None
        )
        if not isinstance(values, list) or not values:
            raise EvidenceError(f"{where}: sandbox_start_samples_s.{side} is not a list of numbers")
        sides[side] = [
            number_of({"s": v}, f"{where}: sandbox_start_samples_s.{side}", "s") for v in values
        ]
    recomputed = max(0.0, statistics.median(sides["confined"]) - statistics.median(sides["direct"]))
    agree(where, "sandbox_per_command_ms", recomputed * 1000, stored_ms, 1e-9, "its samples")


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
    per_command = per_run(data, rel, "ssw", "sandbox_per_command_ms")
    for i, (run, stored) in enumerate(zip(runs, per_command, strict=True)):
        _sandbox_start_agrees(run, f"{rel}: overhead.ssw_runs[{i}]", stored)
    gate_commands = per_run(data, rel, "ssw", "sandboxed_gate_commands")
    tool_commands = [
        len(field_of(run, f"{rel}: overhead.ssw_runs[{i}]", "run_tool_direct"))
        for i, run in enumerate(runs)
    ]
    steps = per_run(data, rel, "ssw", "steps")
    per_step = [
        c * (g + t) / n
        for c, g, t, n in zip(per_command, gate_commands, tool_commands, steps, strict=True)
    ]
    ssw = per_run(data, rel, "ssw", "overhead_per_step_ms")
    mini = per_run(data, rel, "mini", "overhead_per_step_ms")
    return Computed(
        {
            **measured(inputs, rel, data),
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
    return _launch_times(
        inputs,
        "first_call",
        "ssw_launch_to_first_request_s",
        "mini_launch_to_first_request_s",
        "first_call",
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
            "help_ratio": RATIO,
        },
        cold_start,
        "`--help` in a fresh process, ms (median, min, max), and ssw's median over mini's",
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
            "uncached_vs_mini": pct(1),
            "ideal_prefix_uncached_tokens": INT,
            "uncached_vs_ideal_prefix": pct(1),
        },
        prompt_economy,
        "prompt repeat share per step, uncached tokens against full history and against mini's",
    ),
)
