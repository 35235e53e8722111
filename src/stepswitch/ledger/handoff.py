"""A task run's dollars handed across machines (ADR 0029): the bench's ledger, on the machine
that runs `ssw bench run --scheduler`, reserves a task run's whole cap before the run is sent;
the worker runs it against a ledger of its own; its rows come back and replace the reservation
in one transaction. A task run whose worker is lost keeps its reservation as a bound, $0 to the
whole cap: counted at the high end, never run again.

A reservation is a row of `calls` like any other (provider `cluster`, step type `task_run`), so
every report and budget counts it while the run is out, and a bench that dies with runs out
finds them open when it resumes (its own process's reservations: recovered as bounds).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import Any

from stepswitch.ledger import proc
from stepswitch.ledger.admission import Budget
from stepswitch.ledger.book import Ledger, counted
from stepswitch.ledger.store import ROW_COLUMNS, CallRow

RESERVATION_PROVIDER = "cluster"
RESERVATION_STEP_TYPE = "task_run"
LOST_WORKER = "the worker running this task run was lost; counted at its whole reservation"
_INSERTED = tuple(c for c in ROW_COLUMNS if c != "id")


def reserve_task_run(
    ledger: Ledger,
    *,
    run_id: str,
    task_id: str,
    bench_id: str,
    cap_usd: float,
    budget: Budget | None,
) -> int | None:
    """The row that holds `cap_usd` for the run while it is out, or None when the cap does not
    fit in what `budget` has left (counting every bound at its high end)."""
    me = proc.current()
    with ledger.transaction() as conn:
        if budget is not None and counted(conn, "bench", budget.key, True) + cap_usd > (
            budget.limit_usd
        ):
            return None
        cursor = conn.execute(
            """INSERT INTO calls (status, run_id, task_id, bench_id, step, step_type, worker,
                provider, model, attempt, tags, priced, price, prompt_bytes, est_prompt_tokens,
                max_output_tokens, reserved_usd, pid, pid_start, host, boot_id, reserved_at)
            VALUES ('reserved', ?, ?, ?, 0, ?, ?, ?, ?, 0, '{}', 1, NULL, 0, 0, 0, ?, ?, ?, ?, ?,
                ?)""",
            (
                run_id,
                task_id,
                bench_id,
                RESERVATION_STEP_TYPE,
                RESERVATION_PROVIDER,
                RESERVATION_PROVIDER,
                "task-run reservation",
                cap_usd,
                *proc.reserved_now(me),
            ),
        )
        row_id = cursor.lastrowid
    assert row_id is not None
    return row_id


def exported(rows: list[CallRow]) -> list[dict[str, Any]]:
    """A worker ledger's rows as plain data, to travel back. A row still open (the worker's
    process ended mid-call) goes as a bound up to its reservation: nobody can settle it."""
    out = []
    for row in rows:
        data = asdict(row)
        if data["status"] == "reserved":
            data |= {"status": "bound", "error": "process ended mid-call", "low_usd": 0.0}
            data |= {"high_usd": data["reserved_usd"], "settled_at": time.time()}
        out.append(data)
    return out


def settle_task_run(ledger: Ledger, reservation: int, rows: list[dict[str, Any]]) -> None:
    """The worker's rows in place of the reservation, in one transaction."""
    placeholders = ", ".join("?" for _ in _INSERTED)
    with ledger.transaction() as conn:
        conn.execute("DELETE FROM calls WHERE id = ? AND status = 'reserved'", (reservation,))
        for row in rows:
            values = {**row, "tags": json.dumps(row.get("tags") or {}, sort_keys=True)}
            values["price"] = json.dumps(row["price"]) if row.get("price") else None
            values["priced"] = int(bool(row.get("priced")))
            conn.execute(
                f"INSERT INTO calls ({', '.join(_INSERTED)}) VALUES ({placeholders})",
                tuple(values.get(c) for c in _INSERTED),
            )


def lose_task_run(ledger: Ledger, reservation: int, why: str = LOST_WORKER) -> None:
    """The reservation becomes a bound from $0 to the whole cap: the run was lost with it."""
    with ledger.transaction() as conn:
        conn.execute(
            """UPDATE calls SET status = 'bound', settled_at = ?, error = ?, low_usd = 0.0,
                high_usd = reserved_usd
            WHERE id = ? AND status = 'reserved'""",
            (time.time(), why, reservation),
        )


def release_task_run(ledger: Ledger, reservation: int) -> None:
    """The run never called a model: nothing to count, the reservation goes."""
    with ledger.transaction() as conn:
        conn.execute("DELETE FROM calls WHERE id = ? AND status = 'reserved'", (reservation,))
