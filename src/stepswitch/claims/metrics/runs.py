"""Committed run folders (run.json + steps.jsonl, read through `records.load_run`): the dollars
the ledger recorded for each model step against its tokens at the list price run.json recorded
for its worker. A bench folder (bench/runs/<id>/) stands for every task run in it; its own
run.json is noted for registration too (its start, and the claims `ssw bench run --claim ID`
tied it to). Scripted steps and runs are counted, so a claim can say which of its dollars no
model earned; each run is noted as a model's, a script's or a built-in's, so a claim on scripted
runs cannot speak of models (claims/scope.py)."""

from __future__ import annotations

import math
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from stepswitch.claims.inputs import EvidenceError, Inputs, RunSeen
from stepswitch.claims.metrics.base import Computed, Metric, note_contestants
from stepswitch.claims.numbers import INT, fixed
from stepswitch.claims.scope import EvidenceKind

if TYPE_CHECKING:
    from stepswitch.records.run import RunRecord
    from stepswitch.records.steps import ModelStep

USD = fixed(4)  # the dollars the ledger recorded, as `ssw ledger` shows them


def _note_benches(inputs: Inputs, run_rel: str, noted: set[str]) -> None:
    """The bench folders `run_rel` is in (or is): each is noted once, so a task run named
    alone is still tied to its bench's claims and start."""
    from stepswitch.claims.metrics.bench import RUN_FILE, bench_seen

    for parent in (PurePosixPath(run_rel), *PurePosixPath(run_rel).parents):
        rel = parent.as_posix()
        if rel in noted or rel == ".":
            continue
        path = inputs.root / rel / RUN_FILE
        if path.is_file() and not (path.parent / "steps.jsonl").is_file():
            record = inputs.json(f"{rel}/{RUN_FILE}")
            if isinstance(record, dict) and "bench_id" in record:  # a bench's, not a task run's
                noted.add(rel)
                bench_seen(inputs, rel)


def _run_folders(inputs: Inputs, rel: str) -> list[str]:
    """`rel` itself when it is a run folder, else every run folder under it (a bench run)."""
    folder = inputs.folder(rel)
    if (folder / "run.json").is_file() and (folder / "steps.jsonl").is_file():
        return [rel]
    found = sorted(
        p.parent.relative_to(inputs.root).as_posix()
        for p in folder.rglob("steps.jsonl")
        if (p.parent / "run.json").is_file()
    )
    if not found:
        raise EvidenceError(f"{rel} holds no run folder (run.json with steps.jsonl)")
    return found


def _run_kind(run: RunRecord, steps: list[ModelStep]) -> EvidenceKind:
    """A bench's built-ins by their tag; else scripted when any step replayed a script."""
    kind = run.tags.get("kind")
    if kind == "oracle":
        return "oracle"
    if kind == "null":
        return "null"
    if any(s.scripted and not s.simulated for s in steps):
        return "scripted"  # a replayed script: stricter than the simulated population
    if run.simulated or any(s.simulated for s in steps):
        return "simulated"
    if run.scripted or any(s.scripted for s in steps):
        return "scripted"
    return "model"


def ledger_dollars(inputs: Inputs) -> Computed:
    from stepswitch.ledger.pricing import step_usd
    from stepswitch.records.folder import load_run
    from stepswitch.records.steps import ModelStep
    from stepswitch.registry.presets import Price

    noted: set[str] = set()  # bench folders seen
    runs = steps = checked = not_checked = unpriced = mismatches = 0
    scripted_runs = scripted_steps = 0
    dollars = 0.0
    kinds: dict[str, EvidenceKind] = {}  # each run: what it is evidence of
    for rel in inputs.paths("runs"):
        for run_rel in _run_folders(inputs, rel):
            _note_benches(inputs, run_rel, noted)
            loaded = load_run(Path(inputs.root / run_rel))
            run = loaded.run
            inputs.run(
                RunSeen(
                    run_rel,
                    run.started_at,
                    run.base_commit,
                    tuple(c.strip() for c in run.tags.get("claim", "").split(",") if c.strip()),
                )
            )
            runs += 1
            scripted_runs += run.scripted
            model_steps = loaded.of(ModelStep)
            kinds[f"run {run_rel}"] = _run_kind(run, model_steps)
            total = 0.0
            for step in model_steps:
                steps += 1
                scripted_steps += step.scripted
                if step.cost is None:
                    unpriced += 1
                    continue
                total += step.cost.low
                listed = run.prices.get(step.worker)
                if not step.usage_reported or step.attempts > 1 or listed is None:
                    not_checked += 1  # usage lost (billed at its bound) or retried attempts
                    continue
                listed_usd = step_usd(Price.model_validate(listed), step)
                checked += 1
                close = math.isclose(listed_usd, step.cost.low, rel_tol=1e-9, abs_tol=1e-12)
                mismatches += not (close and step.cost.is_exact)
            mismatches += not math.isclose(total, run.totals.cost.low, rel_tol=1e-9, abs_tol=1e-12)
            dollars += total
    note_contestants(inputs, LEDGER_DOLLARS, kinds)
    return Computed(
        {
            "runs": runs,
            "model_steps": steps,
            "checked_steps": checked,
            "not_checked_steps": not_checked,
            "unpriced_steps": unpriced,
            "mismatches": mismatches,
            "scripted_runs": scripted_runs,
            "scripted_steps": scripted_steps,
            "dollars": dollars,
        }
    )


LEDGER_DOLLARS = Metric(
    "runs.ledger_dollars",
    ("runs",),
    {
        "runs": INT,
        "model_steps": INT,
        "checked_steps": INT,
        "not_checked_steps": INT,
        "unpriced_steps": INT,
        "mismatches": INT,
        "scripted_runs": INT,
        "scripted_steps": INT,
        "dollars": USD,
    },
    ledger_dollars,
    "each model step's recorded dollars against its tokens at run.json's list price",
    evidence=frozenset({"model", "scripted", "simulated", "oracle", "null"}),
)
METRICS = (LEDGER_DOLLARS,)
