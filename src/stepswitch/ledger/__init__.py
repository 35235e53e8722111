"""The spend ledger: one SQLite row per provider attempt, admission control against dollar
budgets, and the `ssw ledger` report (read-only). See docs/decisions/0007-ledger.md,
0013-budget-bound.md and 0024-a-ledger-never-reset.md."""

from stepswitch.ledger.admission import (
    MIN_OUTPUT_TOKENS,
    PROMPT_ALLOWANCE_TOKENS,
    Budget,
    BudgetExceeded,
    CallIntent,
    Reservation,
    Scope,
    Spend,
    prompt_token_bound,
)
from stepswitch.ledger.book import ORPHAN_ERROR, Ledger, open_ledger
from stepswitch.ledger.hooks import CallTracker
from stepswitch.ledger.report import By, GroupRow, ledger_command, render_report, report
from stepswitch.ledger.store import DEFAULT_PATH, SCHEMA_VERSION, CallRow, LedgerError
from stepswitch.ledger.view import Snapshot, read_ledger

__all__ = [
    "DEFAULT_PATH",
    "MIN_OUTPUT_TOKENS",
    "ORPHAN_ERROR",
    "PROMPT_ALLOWANCE_TOKENS",
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
    "Snapshot",
    "Spend",
    "ledger_command",
    "open_ledger",
    "prompt_token_bound",
    "read_ledger",
    "render_report",
    "report",
]
