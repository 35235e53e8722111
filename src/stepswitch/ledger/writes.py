"""Every write to an open ledger: one BEGIN IMMEDIATE transaction that also raises the meta
row's write counter, then, once SQLite has committed it, the tally beside the file. So the file
and the tally agree on how many writes were committed, and an open can tell a lost one."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from stepswitch.ledger.meta import bump
from stepswitch.ledger.readonly import hold, release
from stepswitch.ledger.store import immediate
from stepswitch.ledger.tally import TallyWriter


class Writes:
    """The counted write transactions of one connection (the caller serializes threads)."""

    def __init__(
        self, conn: sqlite3.Connection, path: Path, ledger_id: str, tally: TallyWriter
    ) -> None:
        self.conn = conn
        self.path = path
        self.ledger_id = ledger_id
        self.tally = tally
        self._held: tuple[int, int] | None = hold(path)

    @contextlib.contextmanager
    def transaction(self, *, fsync: bool = True) -> Iterator[sqlite3.Connection]:
        """`immediate()` plus the count; a transaction that changed nothing is not counted."""
        before = self.conn.total_changes
        count: int | None = None
        with immediate(self.conn, self.path, fsync=fsync) as conn:
            yield conn
            if conn.total_changes != before:
                count = bump(conn)
        if count is not None:
            # After COMMIT, never before: a tally ahead of the file would be a false alarm.
            self.tally.record(self.ledger_id, count, durable=fsync)

    def close(self) -> None:
        self.tally.close()
        if self._held is not None:
            release(self._held)
            self._held = None
