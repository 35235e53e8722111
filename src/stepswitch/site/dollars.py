"""The dashboard's dollars: each run's record beside the ledger's rows for it, so a killed run
(no final totals) and a call in flight at a run's end show as the ledger's range, and a ledger
that was not read is said, never a silent $0."""

from __future__ import annotations

from dataclasses import replace

from stepswitch.agent.workspace.spend import LedgerRead
from stepswitch.records.dollars import RunDollars
from stepswitch.records.money import CostRange
from stepswitch.site.sources import ReplayRun, Source


def _so_far(run: ReplayRun) -> CostRange | None:
    steps = [] if run.loaded is None else run.loaded.model_steps
    return sum((m.cost or CostRange() for m in steps), CostRange()) if steps else None


def run_dollars(run: ReplayRun, spend: LedgerRead) -> RunDollars | None:
    record = run.record
    return None if record is None else spend.dollars(record, _so_far(run))


def dollars_text(source: Source, spend: LedgerRead) -> str:
    """A source's dollars in one cell: its runs' ranges summed, with what is unsaid."""
    found = [d for d in (run_dollars(r, spend) for r in source.runs) if d is not None]
    if len(found) == 1:
        return found[0].text()
    cost = sum((d.cost for d in found), CostRange())
    notes = sorted({d.note for d in found if d.note})
    return str(cost) + (f" ({'; '.join(notes)})" if notes else "")


def priced(source: Source, spend: LedgerRead) -> Source:
    """The source with each record's dollars the ledger's range where it holds more, so the
    replay page's bills, totals and chart carry every dollar; what is unsaid becomes a note."""
    runs: list[ReplayRun] = []
    unsaid: dict[str, int] = {}
    for run in source.runs:
        dollars = run_dollars(run, spend)
        if dollars is None or run.loaded is None:
            runs.append(run)
            continue
        if dollars.note:
            unsaid[dollars.note] = unsaid.get(dollars.note, 0) + 1
        record = run.loaded.run
        totals = record.totals.model_copy(update={"cost": dollars.cost})
        loaded = replace(run.loaded, run=record.model_copy(update={"totals": totals}))
        runs.append(replace(run, loaded=loaded))
    notes = [f"{n} run(s): {what}" for what, n in unsaid.items()]
    if spend.problem is not None and unsaid:
        notes.append(f"ledger not read: {spend.problem}")
    return replace(source, runs=tuple(runs), notes=(*source.notes, *notes))
