"""Marking the record of a run whose process is gone: `ssw runs clean` finds it by its lock, a
bench resume by its journal. The record never got its final totals, so its dollars become the
ledger's range for the run when the ledger was read."""

from __future__ import annotations

import json
from pathlib import Path

from stepswitch.records.dollars import RunDollars
from stepswitch.records.money import CostRange
from stepswitch.records.run import Totals


def mark_abandoned(folder: Path, reason: str, found: CostRange | None) -> bool:
    """run.json, when it still says running: interrupted, with `reason`. True when rewritten."""
    path = folder / "run.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("outcome") != "running" or data.get("schema_version") != 2:
        return False
    data.update(outcome="interrupted", exit_code=130, reason=f"abandoned: {reason}")
    if found is not None:
        totals = Totals.read(data.get("totals") or {}).with_ledger(found)
        data["totals"] = totals.model_dump(mode="json")
    staged = path.with_suffix(".json.tmp")
    try:
        staged.write_text(json.dumps(data, indent=2), encoding="utf-8")
        staged.replace(path)
    except OSError:
        staged.unlink(missing_ok=True)  # a half-written copy only takes space
        raise
    return True


def mark_abandoned_run(
    folder: Path, dollars: RunDollars | None = None, found_by: str = "ssw runs clean"
) -> None:
    """run.json of a run whose process is gone: interrupted, its dollars the ledger's."""
    found = None
    if dollars is not None and dollars.not_read is None:
        found = dollars.ledger.cost if dollars.ledger is not None else CostRange()
    why = f"its ssw process ended without finishing the run (killed?); found by `{found_by}`"
    mark_abandoned(folder, why, found)
