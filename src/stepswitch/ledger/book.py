"""The Ledger: reserve before an attempt leaves, settle after it, recover what a killed
process left open. Every write is one BEGIN IMMEDIATE transaction, so several processes can
share one file and the admission check plus its reservation are atomic across them."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from stepswitch.ledger import proc
from stepswitch.ledger.admission import (
    PROMPT_ALLOWANCE_TOKENS,
    SCOPE_COLUMN,
    BudgetExceeded,
    CallIntent,
    ProviderOverReported,
    Reservation,
    Scope,
    Spend,
    check_prompt_fits,
)
from stepswitch.ledger.opening import open_for_writing
from stepswitch.ledger.overreport import (
    evidence,
    flagged,
    over_report_words,
    prompt_floor,
    prompt_misreport,
)
from stepswitch.ledger.pricing import cost_usd
from stepswitch.ledger.store import (
    BUSY_TIMEOUT_S,
    SELECT_ROW,
    CallRow,
    Status,
    guarded,
    row_from_sql,
)
from stepswitch.ledger.writes import Writes
from stepswitch.wire.types import Attempt, Usage

ORPHAN_ERROR = "process ended mid-call"
NO_USAGE = "the provider reported no usage"
# Statuses a provider may send after reading (and billing) the prompt, e.g. Azure OpenAI's
# content-filter 400: a bound up to the prompt's worst case, no output (ADR 0007).
PROMPT_MAY_BILL = frozenset({400, 422})
# A settled call is over its reservation when it billed more than this above it: float noise
# in the two sums is ~1e-17 dollars, a real overrun at least one token's price.
OVERRUN_TOLERANCE_USD = 1e-9

# What a scope key has counted against it. :high picks lost-usage rows' high bound over the low.
_COUNTED = """SELECT COALESCE(SUM(CASE status
    WHEN 'settled' THEN COALESCE(usd, 0)
    WHEN 'reserved' THEN reserved_usd
    WHEN 'bound' THEN COALESCE(CASE WHEN :high THEN high_usd ELSE low_usd END, 0)
    ELSE 0 END), 0) FROM calls WHERE {column} = :key"""

_SPEND = """SELECT
    COALESCE(SUM(CASE WHEN status IN ('settled', 'bound') THEN COALESCE(low_usd, 0) END), 0),
    COALESCE(SUM(CASE status WHEN 'reserved' THEN reserved_usd
        WHEN 'settled' THEN COALESCE(high_usd, 0) WHEN 'bound' THEN COALESCE(high_usd, 0) END), 0),
    COUNT(CASE WHEN priced = 0 AND status IN ('settled', 'bound', 'reserved') THEN 1 END),
    COUNT(CASE WHEN status = 'reserved' THEN 1 END),
    COUNT(CASE WHEN status = 'bound' THEN 1 END)
    FROM calls WHERE {column} = :key"""


def http_refusal(attempt: Attempt) -> bool:
    """The provider answered with an HTTP error status before generating anything, as the wire
    client says. An error event inside a 200 stream is not one: tokens may have been generated
    and billed."""
    return attempt.kind == "refused"


def overrun(reservation: Reservation, usage: Usage, usd: float | None) -> dict[str, Any]:
    """The over_usd and overrun columns of a settled call that billed above its reservation:
    by how much, and which bound the provider's usage broke (ADR 0013); else nothing. A
    completion past its cap inside the reservation (or unpriced) still gets `overrun`."""
    intent, bound = reservation.intent, reservation.est_prompt_tokens
    if usd is None or usd - reservation.reserved_usd <= OVERRUN_TOLERANCE_USD:
        if usage.completion_tokens <= intent.max_output_tokens:
            return {}
        # over_usd stays NULL: no dollars past the reservation, but the cap broke.
        words = over_report_words(
            intent.provider, usage.completion_tokens, intent.max_output_tokens
        )
        return {"overrun": words}
    why = []
    if usage.prompt_tokens > bound:
        source = (
            f"{reservation.prompt_bytes:,} request bytes + {PROMPT_ALLOWANCE_TOKENS:,}"
            if bound == reservation.prompt_bytes + PROMPT_ALLOWANCE_TOKENS
            else "the context window"
        )
        why.append(
            f"{usage.prompt_tokens:,} prompt tokens billed for a bound of {bound:,} ({source})"
        )
    if usage.completion_tokens > intent.max_output_tokens:
        reasoning = (
            f", {usage.reasoning_tokens:,} of them reasoning," if usage.reasoning_tokens else ""
        )
        why.append(
            f"{usage.completion_tokens:,} completion tokens billed{reasoning} for a cap of "
            f"{intent.max_output_tokens:,} (max_output_tokens)"
        )
    if not why:
        why.append("the billed tokens are inside the bounds, but priced above the reservation")
    return {"over_usd": usd - reservation.reserved_usd, "overrun": "; ".join(why)}


def billed(reservation: Reservation, usage: Usage) -> dict[str, Any]:
    """The usd (and misreport) columns of a call with usage: what the usage costs, or for a
    prompt count below what the request's bytes hold, from that floor up to the request's
    bound (ADR 0067); an over-report is billed as reported (ADR 0025)."""
    intent = reservation.intent
    words = prompt_misreport(
        intent.provider, usage.prompt_tokens, reservation.prompt_bytes, intent.context_window
    )
    price = intent.price
    usd = cost_usd(price, usage) if price is not None else None
    if words is None:
        return {"usd": usd}
    floor = prompt_floor(reservation.prompt_bytes)
    if price is None or usage.prompt_tokens >= floor:
        return {"usd": usd, "misreport": words}
    low = cost_usd(price, replace(usage, prompt_tokens=floor))
    top = max(floor, reservation.est_prompt_tokens)
    high = cost_usd(price, replace(usage, prompt_tokens=top))
    return {"usd": low, "high_usd": high, "misreport": words}


def counted(conn: sqlite3.Connection, scope: Scope, key: str, high: bool) -> float:
    """What a scope key has counted against it, inside the caller's transaction."""
    sql = _COUNTED.format(column=SCOPE_COLUMN[scope])
    return float(conn.execute(sql, {"key": key, "high": high}).fetchone()[0])


class Ledger:
    """One open ledger file. Thread-safe; one per process is enough."""

    def __init__(self, writes: Writes) -> None:
        self.path = writes.path
        self._conn = writes.conn
        self._writes = writes  # every write: counted in the file and in its tally
        self._lock = threading.Lock()
        self._me = proc.current()
        self.recovered: list[CallRow] = []  # what recover_orphans settled when this was opened

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._writes.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One counted write transaction, for writers beside this class (ledger.handoff)."""
        with self._lock, self._writes.transaction() as conn:
            yield conn

    # --- admission ---

    def reserve(self, intent: CallIntent, attempt: int, prompt_bytes: int) -> Reservation:
        """Admit one attempt, or raise BudgetExceeded; the check and the row are one transaction."""
        me = self._me
        if me.pid != os.getpid():
            # SQLite connections must not cross fork(), and the pid on the row would be wrong.
            raise RuntimeError("a Ledger was used after fork(); open the ledger in each process")
        check_prompt_fits(intent, prompt_bytes)  # PromptTooLong: no row, nothing sent
        tokens = intent.prompt_tokens(prompt_bytes)
        worst = intent.worst_usd(tokens)
        # fsynced only when it reserves dollars: a process crash loses no commit either way, a
        # power loss only an unsynced one, which then holds no money (ADR 0074).
        with self._lock, self._writes.transaction(fsync=worst > 0) as conn:
            liar = flagged(conn, intent)  # in the same transaction as the row it would add
            if liar is not None:
                raise ProviderOverReported(intent, evidence(liar))
            counted = [
                (b, self._counted(conn, b.scope, b.key, intent.count_high_bounds))
                for b in intent.budgets
            ]
            passed = [(b, c) for b, c in counted if c + worst > b.limit_usd]
            if passed:
                budget, spent = passed[0]
                fits = min(intent.fitting_output_tokens(tokens, b.limit_usd, c) for b, c in counted)
                raise BudgetExceeded(
                    budget,
                    spent,
                    worst,
                    intent=intent,
                    prompt_bytes=prompt_bytes,
                    prompt_tokens=tokens,
                    fits_output_tokens=fits,
                )
            cursor = conn.execute(
                """INSERT INTO calls (status, run_id, task_id, bench_id, step, step_type, worker,
                    provider, model, attempt, tags, priced, price, prompt_bytes,
                    est_prompt_tokens, max_output_tokens, reserved_usd, pid, pid_start, host,
                    boot_id, reserved_at)
                VALUES ('reserved', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                    ?)""",
                (
                    intent.run_id,
                    intent.task_id,
                    intent.bench_id,
                    intent.step,
                    intent.step_type,
                    intent.worker,
                    intent.provider,
                    intent.model,
                    attempt,
                    json.dumps(intent.tags, sort_keys=True),
                    intent.price is not None,
                    intent.price.model_dump_json() if intent.price is not None else None,
                    prompt_bytes,
                    tokens,
                    intent.max_output_tokens,
                    worst,
                    *proc.reserved_now(me),
                ),
            )
            row_id = cursor.lastrowid
        assert row_id is not None
        return Reservation(row_id, intent, attempt, prompt_bytes, tokens, worst)

    @staticmethod
    def _counted(conn: sqlite3.Connection, scope: Scope, key: str, high: bool) -> float:
        return counted(conn, scope, key, high)

    def settle(self, reservation: Reservation, attempt: Attempt) -> CallRow:
        """Record what the attempt cost: exact from usage, $0 when nothing can have been billed,
        else a bound from $0 (certain) to the reservation."""
        values: dict[str, Any] = {
            "http_status": attempt.status,
            "request_id": attempt.request_id,
            "error": attempt.error,
            "latency_s": attempt.latency_s,
        }
        completion = attempt.completion
        high = reservation.reserved_usd
        status: Status
        if not attempt.sent:
            status = "not_sent"  # the connection was never made: nothing can have been billed
        elif completion is not None and completion.usage is not None:
            status = "settled"
            usage = completion.usage
            values |= billed(reservation, usage)
            values |= overrun(reservation, usage, values["usd"])
            values |= {
                "prompt_tokens": usage.prompt_tokens,
                "cached_tokens": usage.cached_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
                "completion_tokens": usage.completion_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
            }
        elif http_refusal(attempt) and attempt.status in PROMPT_MAY_BILL:
            status = "bound"  # rejected after reading the prompt (a content filter): no output
            high = reservation.intent.worst_usd(reservation.est_prompt_tokens, output=False)
        elif http_refusal(attempt):
            status = "error"  # refused before any work: rate limits, overload, auth
        else:
            status = "bound"
            if completion is not None:
                values["error"] = NO_USAGE
        if completion is not None:
            values["finish_reason"] = completion.finish_reason.value
            values["request_id"] = attempt.request_id or completion.request_id
            values["served_model"] = completion.model or None
        return self._finish(reservation, status, values, high)

    def settle_lost(self, reservation: Reservation, error: str) -> CallRow:
        """The attempt ended with no report (an exception between the hooks): a bound."""
        return self._finish(reservation, "bound", {"error": error}, reservation.reserved_usd)

    def _finish(
        self, reservation: Reservation, status: Status, values: dict[str, Any], high: float
    ) -> CallRow:
        if reservation.intent.price is None:
            values |= {"usd": None, "low_usd": None, "high_usd": None}  # "unpriced", never $0
        elif status == "bound":
            values |= {"usd": None, "low_usd": 0.0, "high_usd": high}
        elif status == "settled":
            values |= {"low_usd": values["usd"]}
            values.setdefault("high_usd", values["usd"])  # above it: an under-report's range
        else:
            values |= {"usd": 0.0, "low_usd": 0.0, "high_usd": 0.0}
        sets = ", ".join(f"{name} = :{name}" for name in values)
        row_id = reservation.row_id
        # Not fsynced: until the next reservation's commit flushes it, a power loss would leave
        # the reservation's bound counted, more than was spent, never less.
        with self._lock, self._writes.transaction(fsync=False) as conn:
            # A row recovery judged orphaned may still be settled by its live owner: truth wins.
            updated = conn.execute(
                f"""UPDATE calls SET {sets}, status = :status, settled_at = :now
                WHERE id = :id
                    AND (status = 'reserved' OR (status = 'bound' AND error = :orphan))""",
                {
                    **values,
                    "status": status,
                    "now": time.time(),
                    "id": row_id,
                    "orphan": ORPHAN_ERROR,
                },
            ).rowcount
            if updated != 1:
                raise ValueError(f"ledger row {row_id} was already settled")
            return self._row(conn, row_id)

    # --- reading ---

    @staticmethod
    def _row(conn: sqlite3.Connection, row_id: int) -> CallRow:
        return row_from_sql(conn.execute(f"{SELECT_ROW} WHERE id = ?", (row_id,)).fetchone())

    def rows(self, run_id: str | None = None) -> list[CallRow]:
        where, args = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
        with self._lock, guarded(self.path):
            found = self._conn.execute(f"{SELECT_ROW} {where} ORDER BY id", args).fetchall()
        return [row_from_sql(values) for values in found]

    def spend(self, scope: Scope, key: str) -> Spend:
        with self._lock, guarded(self.path):
            sql = _SPEND.format(column=SCOPE_COLUMN[scope])
            low, high, unpriced, open_calls, lost = self._conn.execute(sql, {"key": key}).fetchone()
        return Spend(float(low), float(high), int(unpriced), int(open_calls), int(lost))

    def lost_usage(self, row: CallRow) -> bool:
        """The call may have been billed but its usage is unknown: by default, stop the task."""
        return row.lost_usage

    # --- recovery ---

    def recover_orphans(self) -> list[CallRow]:
        """Settle, as bounds, the reservations of processes that ended mid-call on this host."""
        me = self._me
        with self._lock, self._writes.transaction() as conn:
            open_rows = conn.execute(
                "SELECT id, pid, pid_start, host, boot_id FROM calls WHERE status = 'reserved'"
            ).fetchall()
            dead = [r[0] for r in open_rows if proc.is_orphan(r[1], r[2], r[3], r[4], me)]
            for row_id in dead:
                conn.execute(
                    """UPDATE calls SET status = 'bound', settled_at = ?, error = ?,
                        low_usd = CASE WHEN priced THEN 0.0 END,
                        high_usd = CASE WHEN priced THEN reserved_usd END
                    WHERE id = ?""",
                    (time.time(), ORPHAN_ERROR, row_id),
                )
            return [self._row(conn, row_id) for row_id in dead]


def open_ledger(
    path: Path, *, create: bool = True, busy_timeout_s: float = BUSY_TIMEOUT_S
) -> Ledger:
    """Open the ledger to write (making it only where none was, when `create`), after checking
    it read-only (ledger.opening), then recover orphans. Reports use ledger.view instead."""
    ledger = Ledger(open_for_writing(path, create=create, busy_timeout_s=busy_timeout_s))
    try:
        ledger.recovered = ledger.recover_orphans()
    except BaseException:
        ledger.close()
        raise
    return ledger
