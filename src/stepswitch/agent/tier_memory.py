"""Tier memory (`[escalation] memory = true`, ADR 0039): a run starts on the rung that the same
repository's recent runs of the same kind of task needed.

The runs it reads are the finished `ssw run`s beside this one (`.ssw/runs/*/run.json`) that
ended `done` under the same ladder, with the same `task_kind` tag (`ssw run --tag task_kind=bugfix`;
none matches none), scripted only when this run is; the most recent RECENT of them, by start. With
fewer than MIN_RUNS the run starts on rung 0. The rung a run needed is the highest it stood on
(its escalations, or the rung it started on). The start is the lowest rung every one of them
needed: a rung is skipped only when each recent run climbed past it. A record that cannot be read
is counted and said, never silently left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from stepswitch.records.run import RunRecord, TierMemory

RECENT = 3
KIND_TAG = "task_kind"  # `kind` is the bench's: a contestant's kind
MIN_RUNS = 2


@dataclass(frozen=True)
class _Past:
    run_id: str
    started_at: str
    level: int


def needed_level(record: RunRecord) -> int:
    """The highest rung the run stood on: the last it escalated to, or the one it started on."""
    start = record.tier_memory.level if record.tier_memory is not None else 0
    return max(record.totals.escalations, start)


def recall(
    runs: Path, this_run: str, ladder: tuple[str, ...], kind: str | None, scripted: bool
) -> TierMemory:
    """Where a run under `ladder` starts, from the records in `runs`, and which ones said so."""
    found: list[_Past] = []
    unreadable = 0
    for path in sorted(runs.glob("*/run.json")) if runs.is_dir() else []:
        try:
            record = RunRecord.read_json(path.read_bytes())
        except (OSError, ValidationError, ValueError):
            unreadable += 1
            continue
        ladder_of = tuple(record.policy.get("escalation", {}).get("ladder", ()))
        alike = (
            record.ids.run_id != this_run
            and record.ids.bench_id is None
            and record.outcome == "done"
            and ladder_of == ladder
            and record.tags.get(KIND_TAG) == kind
            and record.scripted == scripted
        )
        if alike:
            found.append(_Past(record.ids.run_id, record.started_at, needed_level(record)))
    recent = sorted(found, key=lambda p: p.started_at, reverse=True)[:RECENT]
    skipped = f"; {unreadable} unreadable run records left out" if unreadable else ""
    like = f"{KIND_TAG} {kind!r}" if kind is not None else f"no {KIND_TAG} tag"
    if len(recent) < MIN_RUNS:
        why = (
            f"{len(recent)} earlier done run(s) with this ladder and {like} (needs {MIN_RUNS}): "
            f"starting on rung 0{skipped}"
        )
        return TierMemory(level=0, runs=[p.run_id for p in recent], levels=[], why=why)
    level = min(min(p.level for p in recent), len(ladder) - 1)
    levels = [p.level for p in recent]
    why = (
        f"the last {len(recent)} done runs with this ladder and {like} needed rung "
        f"{', '.join(map(str, levels))}: starting on rung {level} ({ladder[level]}){skipped}"
    )
    return TierMemory(level=level, runs=[p.run_id for p in recent], levels=levels, why=why)
