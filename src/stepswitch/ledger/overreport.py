"""Providers that bill more completion tokens than the max_tokens a call was sent with: named in
the row, the bill and `ssw ledger`; in a bench, every further call to that provider is refused
(ADR 0025)."""

from __future__ import annotations

import sqlite3

from stepswitch.ledger.admission import CallIntent
from stepswitch.ledger.store import SELECT_ROW, CallRow, row_from_sql

# The cap sent is a contract the provider can see, whatever the price: past it is proof, unlike a
# prompt past its byte bound (an assumption about tokenizers, ADR 0013). Older rows qualify too.
_OVER = "status = 'settled' AND completion_tokens > max_output_tokens"
_FLAGGED = f"{SELECT_ROW} WHERE provider = :provider AND {{scope}} AND {_OVER} ORDER BY id LIMIT 1"


def over_reported(row: CallRow) -> bool:
    """Billed more completion tokens than the max_tokens the call was sent with."""
    return (
        row.status == "settled"
        and row.completion_tokens is not None
        and row.completion_tokens > row.max_output_tokens
    )


def over_report_words(provider: str, billed: int, cap: int) -> str:
    """What the row, the bill and `ssw ledger` say of an over-reported completion."""
    return (
        f"over-reported by {provider}: billed {billed:,} completion tokens above max_tokens {cap:,}"
    )


def over_report_text(row: CallRow) -> str:
    return over_report_words(row.provider, row.completion_tokens or 0, row.max_output_tokens)


def evidence(row: CallRow) -> str:
    """The over-report with where it happened, for the refusals of the provider's next calls."""
    return f"{over_report_text(row)} (run {row.run_id}, step {row.step}, {row.model})"


def flagged(conn: sqlite3.Connection, intent: CallIntent) -> CallRow | None:
    """The first row of this provider, in this intent's bench (else its run), that broke a
    bound; None when there is none. Read inside the reservation's transaction."""
    if intent.bench_id is not None:
        scope, key = "bench_id = :key", intent.bench_id
    else:
        scope, key = "run_id = :key", intent.run_id
    found = conn.execute(
        _FLAGGED.format(scope=scope), {"provider": intent.provider, "key": key}
    ).fetchone()
    return row_from_sql(found) if found is not None else None


def stop_reason(rows: list[CallRow]) -> str | None:
    """Why the run stops after a call whose rows broke a bound (ADR 0013, 0025); else None."""
    liar = next((r for r in rows if over_reported(r)), None)
    over = next((r for r in rows if r.over_reservation), None)
    if over is not None:
        named = f"{over_report_text(liar)}; " if liar is not None else ""
        return (
            f"{named}{over.overrun_text()}; stopped before any further call, so no budget is "
            "passed by more than this call's overrun"
        )
    if liar is not None:
        return (
            f"{over_report_text(liar)} ({liar.model}, step {liar.step}, {liar.step_type}; "
            f"inside its ${liar.reserved_usd:.4f} reservation); stopped before any further call: "
            "usage past the cap sent cannot be trusted to hold a budget"
        )
    return None
