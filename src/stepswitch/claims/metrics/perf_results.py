"""Reading bench/perf/results.json (ADR 0026): where and from what it was measured, each side's
repetitions, and a figure's raw samples, its stored summary checked against them."""

from __future__ import annotations

import statistics
from typing import Any

from stepswitch.claims.inputs import EvidenceError, Inputs, Unprovable, agree, field_of, number_of
from stepswitch.claims.numbers import TEXT, Fmt, Value

MEASURED: dict[str, Fmt] = {
    "measured_on": TEXT,
    "measured_commit": TEXT,
    "mini_version": TEXT,
}


def measured(inputs: Inputs, rel: str, data: Any) -> dict[str, Value]:
    when = field_of(data, rel, "date")
    if not isinstance(when, str):
        raise EvidenceError(f"{rel}: date is not text: {when!r}")
    inputs.measured_at(rel, when)
    dirty = field_of(data, rel, "machine", "stepswitch_src_uncommitted_changes")
    if dirty is not False:  # ADR 0028: evidence comes from a committed tree, or proves nothing
        machine = data.get("machine") if isinstance(data, dict) else None
        why = machine.get("stepswitch_dirty_why") if isinstance(machine, dict) else None
        because = f", because {'; '.join(map(str, why))}" if isinstance(why, list) and why else ""
        where = inputs.where(rel, '"stepswitch_src_uncommitted_changes"')
        raise Unprovable(
            f"{rel}: measured with uncommitted changes in src/ ({where}: machine."
            f"stepswitch_src_uncommitted_changes is {dirty!r}{because}): commit, then measure again"
        )
    commit = str(field_of(data, rel, "machine", "stepswitch_commit"))
    inputs.made_at(rel, commit, when)
    return {
        "measured_on": when[:10],
        "measured_commit": commit,
        "mini_version": str(field_of(data, rel, "mini_swe_agent")),
    }


def side_runs(data: Any, rel: str, side: str) -> list[Any]:
    runs = field_of(data, rel, "overhead", f"{side}_runs")
    if not isinstance(runs, list) or not runs:
        raise EvidenceError(f"{rel}: overhead.{side}_runs is not a list of repetitions")
    return runs


def per_run(data: Any, rel: str, side: str, key: str) -> list[float]:
    runs = side_runs(data, rel, side)
    return [number_of(run, f"{rel}: overhead.{side}_runs[{i}]", key) for i, run in enumerate(runs)]


def agrees_with(
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


def samples(data: Any, rel: str, *keys: str) -> list[float]:
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
    agrees_with(data, rel, keys, values, "its samples")
    return values
