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

from stepswitch.claims.inputs import (
    EvidenceError,
    Inputs,
    Unprovable,
    agree,
    field_of,
    number_of,
)
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
    dirty = field_of(data, rel, "machine", "stepswitch_src_uncommitted_changes")
    if dirty is not False:  # ADR 0028: evidence comes from a committed tree, or proves nothing
        raise Unprovable(
            f"{rel}: measured with uncommitted changes in src/ (machine."
            f"stepswitch_src_uncommitted_changes is {dirty!r}): commit, then measure again"
        )
    return {
        "measured_on": when[:10],
        "measured_commit": str(field_of(data, rel, "machine", "stepswitch_commit")),
        "mini_version": str(field_of(data, rel, "mini_swe_agent")),
    }


def _runs(data: Any, rel: str, side: str) -> list[Any]:
    runs = field_of(data, rel, "overhead", f"{side}_runs")
    if not isinstance(runs, list) or not runs:
        raise EvidenceError(f"{rel}: overhead.{side}_runs is not a list of repetitions")
    return runs


def _per_run(data: Any, rel: str, side: str, key: str) -> list[float]:
    runs = _runs(data, rel, side)
    return [number_of(run, f"{rel}: overhead.{side}_runs[{i}]", key) for i, run in enumerate(runs)]


def _agrees_with(
    data: Any, rel: str, keys: tuple[str, ...], values: list[float], source: str
) -> None:
    """Each summary statistic stored at `keys` (median, min, max, n) is what `values` give."""
    node = field_of(data, rel, *keys)
    if not isinstance(node, dict):
        raise EvidenceError(f"{rel}: {'.'.join(keys)} is not a summary")
    stats = {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": float(len(values)),
    }
    for stat, recomputed in stats.items():
        if stat in node:
            stored = number_of(node, rel, stat)
            agree(rel, ".".join((*keys, stat)), recomputed, stored, 0.0, source)


def _samples(data: Any, rel: str, *keys: str) -> list[float]:
    """The raw samples of a figure stored as `{samples, median, min, max, n}`, its summary
    checked against them; a figure stored without them cannot prove a claim."""
    node = field_of(data, rel, *keys)
    where = ".".join(keys)
    if not isinstance(node, dict) or "samples" not in node:
        raise Unprovable(
            f"{rel}: {where} has no raw samples, only a summary, which is not trusted as typed: "
            "re-measure with bench/perf/run_all.py, which stores them"
        )
    raw = node["samples"]
    if not isinstance(raw, list) or not raw:
        raise EvidenceError(f"{rel}: {where}.samples is not a list of numbers")
    values = [
        number_of({"sample": x}, f"{rel}: {where}.samples[{i}]", "sample")
        for i, x in enumerate(raw)
    ]
    _agrees_with(data, rel, keys, values, "its samples")
    return values


def _direct_median_agrees(detail: Any, where: str) -> None:
    """Where a run tool command keeps its direct timings (`samples_ms`), its `median_ms` (kept
    to 3 decimals) must be theirs."""
    if not isinstance(detail, dict) or "samples_ms" not in detail:
        return
    raw = detail["samples_ms"]
    if not isinstance(raw, list) or not raw:
        raise EvidenceError(f"{where}: samples_ms is not a list of numbers")
    values = [number_of({"ms": v}, f"{where}.samples_ms", "ms") for v in raw]
    stored = number_of(detail, where, "median_ms")
    agree(where, "median_ms", statistics.median(values), stored, 0.0005, "its samples")


def _overhead_per_step(data: Any, rel: str, side: str) -> tuple[list[float], list[float]]:
    """Each repetition's overhead per step, and its part after the first request, recomputed
    from the repetition's timed parts: overhead = wall - commands - inside the server (- the
    scripted provider's own life, + one sandbox start per gate command, ssw), commands = the
    gates timed in the run plus the run tool's direct medians (ssw) or the actions timed in the
    run (mini); each stored figure must agree."""
    per_step, after_first = [], []
    for i, run in enumerate(_runs(data, rel, side)):
        where = f"{rel}: overhead.{side}_runs[{i}]"

        def num(
            key: str, default: float | None = None, run: Any = run, where: str = where
        ) -> float:
            if default is not None and isinstance(run, dict) and key not in run:
                return default
            return number_of(run, where, key)

        if side == "ssw":
            gates = field_of(run, where, "gates_in_run_s")
            direct = field_of(run, where, "run_tool_direct")
            if not isinstance(gates, list) or not isinstance(direct, list):
                raise EvidenceError(f"{where}: gates_in_run_s and run_tool_direct are lists")
            timed = sum(number_of({"s": g}, f"{where}.gates_in_run_s", "s") for g in gates)
            for j, d in enumerate(direct):
                _direct_median_agrees(d, f"{where}.run_tool_direct[{j}]")
            timed += (
                sum(number_of(d, f"{where}.run_tool_direct", "median_ms") for d in direct) / 1000
            )
            rounding = 0.0005e-3 * len(direct)  # each direct median is kept to 3 decimals of a ms
        else:
            actions = field_of(run, where, "commands_in_run_ms")
            if not isinstance(actions, list):
                raise EvidenceError(f"{where}: commands_in_run_ms is not a list")
            timed = sum(number_of({"ms": a}, f"{where}.commands_in_run_ms", "ms") for a in actions)
            timed /= 1000
            rounding = 0.0005e-3 * len(actions)
        commands = num("commands_s")
        agree(where, "commands_s", timed, commands, rounding, "its timed commands")
        overhead = (
            num("wall_s")
            - commands
            - num("server_s")
            - num("scripted_plumbing_s", 0.0)
            + num("sandbox_in_gates_s", 0.0)
        )
        agree(where, "overhead_s", overhead, num("overhead_s"), 1e-9, "its timed parts")
        steps = num("steps")
        if steps <= 0:
            raise EvidenceError(f"{where}: steps is not positive")
        ms = overhead / steps * 1000
        agree(
            where, "overhead_per_step_ms", ms, num("overhead_per_step_ms"), 1e-6, "its timed parts"
        )
        after = (overhead - num("setup_s")) / steps * 1000
        stored_after = num("after_first_request_per_step_ms")
        agree(
            where, "after_first_request_per_step_ms", after, stored_after, 1e-6, "its timed parts"
        )
        per_step.append(ms)
        after_first.append(after)
    return per_step, after_first


def overhead(inputs: Inputs) -> Computed:
    rel = inputs.one("results")
    data = inputs.json(rel)
    # The repetitions' own figures first (the summaries must be theirs), then each figure against
    # the timed parts it is worked out from.
    ssw = _per_run(data, rel, "ssw", "overhead_per_step_ms")
    mini = _per_run(data, rel, "mini", "overhead_per_step_ms")
    ssw_after = _per_run(data, rel, "ssw", "after_first_request_per_step_ms")
    mini_after = _per_run(data, rel, "mini", "after_first_request_per_step_ms")
    if len(ssw) != len(mini):
        raise EvidenceError(f"{rel}: {len(ssw)} ssw repetitions but {len(mini)} of mini")
    ssw_ms, mini_ms = statistics.median(ssw), statistics.median(mini)
    pairs = [s / m for s, m in zip(ssw, mini, strict=True)]
    for key, values in (
        ("ssw_overhead_per_step_ms", ssw),
        ("mini_overhead_per_step_ms", mini),
        ("ratio_per_pair", pairs),
        ("ssw_after_first_request_per_step_ms", ssw_after),
        ("mini_after_first_request_per_step_ms", mini_after),
    ):
        _agrees_with(data, rel, ("overhead", key), values, "the repetitions")
    agree(
        rel,
        "overhead.ratio_of_medians",
        ssw_ms / mini_ms,
        number_of(data, rel, "overhead", "ratio_of_medians"),
        1e-12,
        "the repetitions",
    )
    _overhead_per_step(data, rel, "ssw")
    _overhead_per_step(data, rel, "mini")
    steps = int(number_of(data, rel, "steps"))
    ran = {int(n) for side in ("ssw", "mini") for n in _per_run(data, rel, side, "steps")}
    if ran != {steps}:
        raise Unprovable(f"{rel}: steps is {steps}, but the repetitions ran {sorted(ran)} steps")
    after_ssw, after_mini = statistics.median(ssw_after), statistics.median(mini_after)
    return Computed(
        {
            **_measured(inputs, rel, data),
            "steps": steps,
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


def _launch_times(inputs: Inputs, section: str, ssw_key: str, mini_key: str, name: str) -> Computed:
    """One section's launch timings, ssw's and mini's samples in seconds: how many, ssw's median,
    least and most, and mini's median, in milliseconds, named after `name`."""
    rel = inputs.one("results")
    data = inputs.json(rel)
    ssw = _samples(data, rel, section, ssw_key)
    mini = _samples(data, rel, section, mini_key)
    return Computed(
        {
            **_measured(inputs, rel, data),
            f"{name}_reps": len(ssw),
            f"ssw_{name}_ms": statistics.median(ssw) * 1000,
            f"ssw_{name}_ms_min": min(ssw) * 1000,
            f"ssw_{name}_ms_max": max(ssw) * 1000,
            f"mini_{name}_ms": statistics.median(mini) * 1000,
        }
    )


def cold_start(inputs: Inputs) -> Computed:
    return _launch_times(inputs, "cold_start", "ssw_help_s", "mini_help_s", "help")


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
    per_command = _per_run(data, rel, "ssw", "sandbox_per_command_ms")
    for i, (run, stored) in enumerate(zip(runs, per_command, strict=True)):
        _sandbox_start_agrees(run, f"{rel}: overhead.ssw_runs[{i}]", stored)
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
    return _launch_times(
        inputs,
        "first_call",
        "ssw_launch_to_first_request_s",
        "mini_launch_to_first_request_s",
        "first_call",
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
    _run_prompt_agrees(data, rel, tokens, cached, shares)
    mini_tokens, mini_uncached = _mini_prompt(data, rel)
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
            "mini_prompt_tokens": mini_tokens,
            "mini_uncached_tokens": mini_uncached,
        }
    )


def _prompt_lists(data: Any, rel: str, side: str, *keys: str) -> list[list[float]]:
    """The first repetition's per-step prompt lists (the prompt economy is read from it)."""
    run = _runs(data, rel, side)[0]
    where = f"{rel}: overhead.{side}_runs[0].prompt"
    found = []
    for key in keys:
        values = field_of(run, where, "prompt", key)
        if not isinstance(values, list):
            raise EvidenceError(f"{where}.{key} is not a list")
        found.append([number_of({"v": v}, f"{where}.{key}", "v") for v in values])
    return found


def _run_prompt_agrees(
    data: Any, rel: str, tokens: list[int], cached: list[int], shares: list[float]
) -> None:
    """prompt.per_step is the first ssw repetition's prompt, its shares kept to 4 decimals."""
    run_tokens, run_cached, run_shares = _prompt_lists(
        data, rel, "ssw", "prompt_tokens", "cached_tokens", "repeat_share"
    )
    if run_tokens != tokens or run_cached != cached:
        raise Unprovable(
            f"{rel}: prompt.per_step's token counts are not those of overhead.ssw_runs[0].prompt"
        )
    if len(run_shares) != len(shares) or any(
        abs(a - b) > 0.00005 + 1e-12 for a, b in zip(run_shares, shares, strict=True)
    ):
        raise Unprovable(
            f"{rel}: prompt.per_step's repeat shares are not those of overhead.ssw_runs[0].prompt"
        )


def _mini_prompt(data: Any, rel: str) -> tuple[int, int]:
    """mini's prompt and uncached token totals, from its first repetition's per-call counts; the
    stored totals must agree."""
    tokens, cached = _prompt_lists(data, rel, "mini", "prompt_tokens", "cached_tokens")
    total, uncached = int(sum(tokens)), int(sum(tokens) - sum(cached))
    for key, recomputed in (
        ("mini_prompt_tokens_total", total),
        ("mini_uncached_tokens_total", uncached),
    ):
        stored = number_of(data, rel, "prompt", key)
        agree(rel, f"prompt.{key}", recomputed, stored, 0.0, "overhead.mini_runs[0]'s calls")
    return total, uncached


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
