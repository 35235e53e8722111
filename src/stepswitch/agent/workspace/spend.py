"""The ledger's rows per run, for reports: read once, read-only (as `ssw ledger` reads it, so it
settles nothing), counted as `ssw ledger` counts them. A ledger that cannot be read is a reason
said beside each run's dollars, never an error that hides the runs."""

from __future__ import annotations

import os
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from stepswitch.agent.workspace.worktree import SSW_FOLDER
from stepswitch.errors import SswError
from stepswitch.ledger import CallRow, read_ledger
from stepswitch.records.dollars import LedgerSpend, RunDollars, run_dollars
from stepswitch.records.money import CostRange
from stepswitch.records.run import RunRecord


def ledger_of(repo: Path, given: Path | None = None) -> Path:
    """The ledger `ssw run` in `repo` writes: --ledger, else $SSW_LEDGER, else the repo's own."""
    if given is not None:
        return given
    return Path(os.environ.get("SSW_LEDGER") or repo / SSW_FOLDER / "ledger.sqlite")


def _dollars(row: CallRow) -> tuple[float, float]:
    # The same count as `ssw ledger` (ledger.report): an open reservation is $0 to its bound.
    if not row.priced:
        return 0.0, 0.0
    if row.status == "reserved":
        return 0.0, row.reserved_usd
    return row.low_usd or 0.0, row.high_usd or 0.0


def spend_of(rows: list[CallRow]) -> LedgerSpend:
    """One run's rows, summed: what the ledger says it cost."""
    pairs = [_dollars(r) for r in rows]
    return LedgerSpend(
        cost=CostRange(low=sum(p[0] for p in pairs), high=sum(p[1] for p in pairs)),
        calls=len(rows),
        open=sum(r.status == "reserved" for r in rows),
        unpriced=sum(not r.priced and r.status in ("settled", "bound", "reserved") for r in rows),
    )


@dataclass(frozen=True)
class LedgerRead:
    path: Path
    by_run: dict[str, LedgerSpend] = field(default_factory=dict)
    problem: str | None = None  # why it was not read: a missing, damaged or locked file

    def dollars(self, record: RunRecord, steps_so_far: CostRange | None = None) -> RunDollars:
        return run_dollars(record, steps_so_far, self.by_run.get(record.run_id), self.problem)

    def footer(self) -> str | None:
        """The one line a report adds when the ledger was not read."""
        if self.problem is None:
            return None
        return (
            f"ledger not read ({self.problem}): dollars are the records' own, which leave out "
            "a call in flight when a run ended and hold no final totals for a killed run"
        )


# For a caller that wants no dollars (the next `ssw run`'s notice): nothing is opened.
UNREAD = LedgerRead(Path(), problem="not asked for")


def read_spend(path: Path) -> LedgerRead:
    """Every run's rows in the ledger at `path`; never raises for a ledger that cannot be read."""
    try:
        rows = read_ledger(path).rows
    except SswError as exc:
        return LedgerRead(path, problem=str(exc))
    except (OSError, sqlite3.Error) as exc:  # a ledger the checks let through, then unreadable
        return LedgerRead(path, problem=f"ledger {path}: cannot be read ({exc})")
    grouped: dict[str, list[CallRow]] = defaultdict(list)
    for row in rows:
        grouped[row.run_id].append(row)
    return LedgerRead(path, {run_id: spend_of(found) for run_id, found in grouped.items()})
