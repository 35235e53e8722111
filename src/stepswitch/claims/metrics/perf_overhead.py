"""perf.overhead: the harness's overhead per step, each repetition's figure recomputed from its
timed parts (wall, commands, server time), ssw's against mini-swe-agent's."""

from __future__ import annotations

import statistics
from typing import Any

from stepswitch.claims.inputs import EvidenceError, Inputs, Unprovable, agree, field_of, number_of
from stepswitch.claims.metrics.base import Computed
from stepswitch.claims.metrics.perf_results import agrees_with, measured, per_run, side_runs


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
    for i, run in enumerate(side_runs(data, rel, side)):
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
    ssw = per_run(data, rel, "ssw", "overhead_per_step_ms")
    mini = per_run(data, rel, "mini", "overhead_per_step_ms")
    ssw_after = per_run(data, rel, "ssw", "after_first_request_per_step_ms")
    mini_after = per_run(data, rel, "mini", "after_first_request_per_step_ms")
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
        agrees_with(data, rel, ("overhead", key), values, "the repetitions")
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
    ran = {int(n) for side in ("ssw", "mini") for n in per_run(data, rel, side, "steps")}
    if ran != {steps}:
        raise Unprovable(f"{rel}: steps is {steps}, but the repetitions ran {sorted(ran)} steps")
    after_ssw, after_mini = statistics.median(ssw_after), statistics.median(mini_after)
    return Computed(
        {
            **measured(inputs, rel, data),
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
