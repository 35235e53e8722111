"""The ledger as reports see it (`ssw ledger`, `ssw serve`): opened read-only and checked as a
writer's open checks it, read in one snapshot, and never settled. A reservation whose process
is gone stays open here, named as such; settling it is the next writer's job."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from stepswitch.ledger import proc
from stepswitch.ledger.check import Checked, inspect, reading
from stepswitch.ledger.readonly import Opened, read_only
from stepswitch.ledger.store import ROW_COLUMNS, CallRow, row_from_sql
from stepswitch.ledger.tally import read_tally


@dataclass(frozen=True)
class Snapshot:
    rows: list[CallRow]
    checked: Checked


def orphaned(rows: list[CallRow]) -> list[CallRow]:
    """Open reservations whose process ended mid-call: counted up to their reservation."""
    me = proc.current()
    return [
        r
        for r in rows
        if r.status == "reserved" and proc.is_orphan(r.pid, r.pid_start, r.host, r.boot_id, me)
    ]


def _select(conn: sqlite3.Connection, run_id: str | None) -> list[CallRow]:
    # A file an earlier version wrote is not migrated here: its missing columns read as NULL.
    have = {str(r[1]) for r in conn.execute("PRAGMA table_info(calls)")}
    columns = ", ".join(c if c in have else f"NULL AS {c}" for c in ROW_COLUMNS)
    where, args = ("WHERE run_id = ?", (run_id,)) if run_id is not None else ("", ())
    found = conn.execute(f"SELECT {columns} FROM calls {where} ORDER BY id", args).fetchall()
    return [row_from_sql(values) for values in found]


def read_ledger(path: Path, run_id: str | None = None) -> Snapshot:
    """Every row (or one run's), checked; a missing, empty or damaged file is a LedgerError."""
    tally = read_tally(path)  # before the snapshot: every write it counts is in the snapshot

    def read(opened: Opened) -> Snapshot:
        with reading(path):
            opened.conn.execute("BEGIN")
            try:
                checked = inspect(opened, path, tally)
                return Snapshot(_select(opened.conn, run_id), checked)
            finally:
                opened.conn.execute("ROLLBACK")

    return read_only(path, read)
