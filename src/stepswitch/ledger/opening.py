"""Opening the ledger to write: make it only where none was, check it read-only before any
write connection touches it (a write connection's recovery and checkpoint would overwrite a
damaged -wal, the only evidence), then migrate, add the meta row an earlier version's file
lacks, and start the tally when there is none (ADR 0024)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from stepswitch.ledger.check import Checked, inspect, reading
from stepswitch.ledger.create import make_ledger
from stepswitch.ledger.meta import bump, ensure_meta, read_meta
from stepswitch.ledger.readonly import Opened, main_file, read_only
from stepswitch.ledger.store import BUSY_TIMEOUT_S, connect_rw, immediate, migrate
from stepswitch.ledger.tally import TallyWriter, read_tally, refuse_lost_file
from stepswitch.ledger.writes import Writes


def check_file(path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> Checked:
    """Everything an open checks, read-only: nothing is created, written or settled."""
    tally = read_tally(path)  # before the snapshot: every write it counts is in the snapshot

    def read(opened: Opened) -> Checked:
        with reading(path):
            opened.conn.execute("BEGIN")
            try:
                return inspect(opened, path, tally)
            finally:
                opened.conn.execute("ROLLBACK")

    return read_only(path, read, busy_timeout_s)


def open_for_writing(path: Path, *, create: bool, busy_timeout_s: float) -> Writes:
    """A checked, migrated write connection with its counted transactions."""
    if not path.exists():
        if not create:
            main_file(path)  # the one-line error: missing, or lost (a tally says so)
        refuse_lost_file(path)
        make_ledger(path, busy_timeout_s)
    check_file(path, busy_timeout_s)
    conn = connect_rw(path, busy_timeout_s)
    try:
        return _ready(conn, path)
    except BaseException:
        conn.close()
        raise


def _ready(conn: sqlite3.Connection, path: Path) -> Writes:
    tally = TallyWriter(path)
    try:
        before = conn.total_changes
        with immediate(conn, path) as c:
            migrate(c, path)
            ensure_meta(c, "migrated")  # a file an earlier version made: checked from now on
            changed = c.total_changes != before
            if changed:
                bump(c)
            meta = read_meta(c)
        assert meta is not None
        # A copy, or a tally moved aside to accept the file, starts its tally here.
        tally.record(meta.ledger_id, meta.writes, durable=changed)
        return Writes(conn, path, meta.ledger_id, tally)
    except BaseException:
        tally.close()
        raise
