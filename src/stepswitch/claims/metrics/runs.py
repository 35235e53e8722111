"""Committed run folders (run.json + steps.jsonl, read through `records.load_run`): the dollars
the ledger recorded for each model step against its tokens at the list price run.json recorded
for its worker."""

from __future__ import annotations

import math
from pathlib import Path

from stepswitch.claims.inputs import EvidenceError, Inputs, RunSeen
from stepswitch.claims.metrics.base import Computed, Metric
from stepswitch.claims.numbers import INT


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


def ledger_dollars(inputs: Inputs) -> Computed:
    from stepswitch.ledger.pricing import cost_usd
    from stepswitch.records.folder import load_run
    from stepswitch.records.steps import ModelStep
    from stepswitch.registry.presets import Price
    from stepswitch.wire.types import Usage

    runs = steps = checked = not_checked = unpriced = mismatches = 0
    for rel in inputs.paths("runs"):
        for run_rel in _run_folders(inputs, rel):
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
            total = 0.0
            for step in loaded.of(ModelStep):
                steps += 1
                if step.cost is None:
                    unpriced += 1
                    continue
                total += step.cost.low
                listed = run.prices.get(step.worker)
                if not step.usage_reported or step.attempts > 1 or listed is None:
                    not_checked += 1  # usage lost (billed at its bound) or retried attempts
                    continue
                usage = Usage(
                    prompt_tokens=step.prompt_tokens,
                    cached_tokens=step.cached_tokens,
                    cache_write_tokens=step.cache_write_tokens,
                    completion_tokens=step.completion_tokens,
                    reasoning_tokens=step.reasoning_tokens,
                )
                dollars = cost_usd(Price.model_validate(listed), usage)
                checked += 1
                close = math.isclose(dollars, step.cost.low, rel_tol=1e-9, abs_tol=1e-12)
                mismatches += not (close and step.cost.is_exact)
            mismatches += not math.isclose(total, run.totals.cost.low, rel_tol=1e-9, abs_tol=1e-12)
    return Computed(
        {
            "runs": runs,
            "model_steps": steps,
            "checked_steps": checked,
            "not_checked_steps": not_checked,
            "unpriced_steps": unpriced,
            "mismatches": mismatches,
        }
    )


METRICS = (
    Metric(
        "runs.ledger_dollars",
        ("runs",),
        {
            "runs": INT,
            "model_steps": INT,
            "checked_steps": INT,
            "not_checked_steps": INT,
            "unpriced_steps": INT,
            "mismatches": INT,
        },
        ledger_dollars,
        "each model step's recorded dollars against its tokens at run.json's list price",
    ),
)
