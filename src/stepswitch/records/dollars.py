"""What one run cost, as the reports say it (`ssw runs`, the dashboard, the replay page): the
record's own account beside the ledger's, never a silent $0. A run killed mid-call has no final
totals, and a call in flight when a run ended is in no step: the ledger holds both."""

from __future__ import annotations

from dataclasses import dataclass

from stepswitch.records.money import CostRange
from stepswitch.records.run import RunRecord

NOT_READ = "ledger not read"
NOT_IN_LEDGER = "not in the ledger"


@dataclass(frozen=True)
class LedgerSpend:
    """One run's rows in the ledger, counted as `ssw ledger` counts them."""

    cost: CostRange  # an open reservation counts from $0 to its reservation
    calls: int
    open: int = 0  # still reserved: a live call, or one whose process was killed
    unpriced: int = 0


@dataclass(frozen=True)
class RunDollars:
    recorded: CostRange  # the record's totals; without final ones, its steps so far
    final: bool  # the record holds the totals of its end
    ledger: LedgerSpend | None = None  # None: no row of it, or the ledger was not read
    not_read: str | None = None  # why the ledger was not read
    checked: bool = False  # the record itself was checked against the ledger when it ended
    calls: int = 0  # model calls the record counts

    @property
    def cost(self) -> CostRange:
        """Every dollar either account holds: the ledger's range when it says more."""
        return self.recorded if self.ledger is None else self.recorded.covering(self.ledger.cost)

    @property
    def note(self) -> str | None:
        """What the number leaves unsaid: that the ledger was not read, or holds no call."""
        if self.ledger is not None or self.checked:
            return None
        if self.not_read is not None:
            return NOT_READ
        if self.calls or self.recorded.high > 0:
            return NOT_IN_LEDGER  # a run folder copied from another machine, another ledger
        return None

    def text(self) -> str:
        unpriced = self.ledger.unpriced if self.ledger is not None else 0
        money = str(self.cost) + (f" + {unpriced} unpriced" if unpriced else "")
        return money if self.note is None else f"{money} ({self.note})"

    def as_json(self) -> dict[str, object]:
        ledger = self.ledger
        return {
            "low": self.cost.low,
            "high": self.cost.high,
            "recorded": self.recorded.model_dump(),
            "ledger": None if ledger is None else ledger.cost.model_dump(),
            "open_calls": 0 if ledger is None else ledger.open,
            "note": self.note,
        }


def run_dollars(
    record: RunRecord,
    steps_so_far: CostRange | None,
    ledger: LedgerSpend | None,
    not_read: str | None,
) -> RunDollars:
    """A record's dollars beside its ledger rows; `steps_so_far` (None: no step recorded) for a
    run without final totals: its run.json gets them only at the end."""
    final = record.outcome != "running"
    recorded = record.totals.cost
    if not final and steps_so_far is not None:
        recorded = steps_so_far
    return RunDollars(
        recorded=recorded,
        final=final,
        ledger=ledger,
        not_read=not_read,
        checked=final and record.totals.ledger is not None,
        calls=record.totals.steps,
    )
