"""The spend ledger: one SQLite row per provider attempt, admission control against dollar
budgets, and the `ssw ledger` report. See docs/decisions/0007-ledger.md."""

from stepswitch.ledger.admission import (
    BYTES_PER_TOKEN,
    Budget,
    BudgetExceeded,
    CallIntent,
    Reservation,
    Scope,
    Spend,
    estimate_prompt_tokens,
)
from stepswitch.ledger.book import ORPHAN_ERROR, Ledger, open_ledger
from stepswitch.ledger.hooks import CallTracker
from stepswitch.ledger.report import By, GroupRow, ledger_command, render_report, report
from stepswitch.ledger.store import DEFAULT_PATH, SCHEMA_VERSION, CallRow, LedgerError

__all__ = [
    "BYTES_PER_TOKEN",
    "DEFAULT_PATH",
    "ORPHAN_ERROR",
    "SCHEMA_VERSION",
    "Budget",
    "BudgetExceeded",
    "By",
    "CallIntent",
    "CallRow",
    "CallTracker",
    "GroupRow",
    "Ledger",
    "LedgerError",
    "Reservation",
    "Scope",
    "Spend",
    "estimate_prompt_tokens",
    "ledger_command",
    "open_ledger",
    "render_report",
    "report",
]
