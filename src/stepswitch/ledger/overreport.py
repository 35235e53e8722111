"""Providers whose usage cannot be true: more completion tokens than the max_tokens a call was
sent with (ADR 0025), more prompt tokens than the model's window, or fewer than the request's
bytes can encode (ADR 0067). Named in the row, the bill and `ssw ledger`; the run stops, and in a
bench every further call to that provider is refused."""

from __future__ import annotations

import sqlite3

from stepswitch.ledger.admission import CallIntent
from stepswitch.ledger.store import SELECT_ROW, CallRow, row_from_sql

# The cap sent is a contract the provider can see, whatever the price: past it is proof, unlike a
# prompt past its byte bound (an assumption about tokenizers, ADR 0013). Older rows qualify too.
_OVER = "status = 'settled' AND (completion_tokens > max_output_tokens OR misreport IS NOT NULL)"
# No tokenizer packs more than this many bytes of a request body into one token on average over
# a whole request: real ones average 3-4 bytes a token on code and prose, and JSON escaping only
# adds bytes. Generous on purpose: below it is proof, not a guess (ADR 0067).
MAX_BYTES_PER_TOKEN = 32
_FLAGGED = f"{SELECT_ROW} WHERE provider = :provider AND {{scope}} AND {_OVER} ORDER BY id LIMIT 1"


def over_reported(row: CallRow) -> bool:
    """Billed more completion tokens than the max_tokens the call was sent with, or reported a
    prompt count the request cannot have had."""
    return row.status == "settled" and (
        row.misreport is not None
        or (row.completion_tokens is not None and row.completion_tokens > row.max_output_tokens)
    )


def prompt_floor(prompt_bytes: int) -> int:
    """The fewest prompt tokens a request of this many bytes can have been."""
    return prompt_bytes // MAX_BYTES_PER_TOKEN


def prompt_misreport(
    provider: str, prompt_tokens: int, prompt_bytes: int, window: int | None
) -> str | None:
    """What the row says of a prompt count that cannot be true; None when it can be."""
    if window is not None and prompt_tokens > window:
        return (
            f"over-reported by {provider}: billed {prompt_tokens:,} prompt tokens above the "
            f"model's context window of {window:,}"
        )
    floor = prompt_floor(prompt_bytes)
    if prompt_tokens < floor:
        return (
            f"under-reported by {provider}: {prompt_tokens:,} prompt tokens for {prompt_bytes:,} "
            f"request bytes, which hold at least {floor:,} (at most {MAX_BYTES_PER_TOKEN} bytes a "
            f"token); billed from {floor:,} prompt tokens up to the request's bound"
        )
    return None


def over_report_words(provider: str, billed: int, cap: int) -> str:
    """What the row, the bill and `ssw ledger` say of an over-reported completion."""
    return (
        f"over-reported by {provider}: billed {billed:,} completion tokens above max_tokens {cap:,}"
    )


def over_report_text(row: CallRow) -> str:
    if row.misreport is not None:
        return row.misreport
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
        broken = (
            "a prompt count that cannot be true" if liar.misreport else "usage past the cap sent"
        )
        return (
            f"{over_report_text(liar)} ({liar.model}, step {liar.step}, {liar.step_type}; "
            f"inside its ${liar.reserved_usd:.4f} reservation); stopped before any further call: "
            f"{broken} cannot be trusted to hold a budget"
        )
    return None
