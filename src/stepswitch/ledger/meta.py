"""The ledger's own record of itself: one `ledger_meta` row written when the file is made (or
first opened for writing by this version) with a format id and a random ledger id, and a write
counter every write transaction raises before it commits. See ADR 0024."""

from __future__ import annotations

import sqlite3
import time
import uuid
from typing import Literal

from pydantic import BaseModel, ConfigDict

FORMAT = "stepswitch-ledger/1"
TABLE = "ledger_meta"

_CREATE = f"""CREATE TABLE {TABLE} (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    format TEXT NOT NULL,
    ledger_id TEXT NOT NULL,
    created_at REAL NOT NULL,
    origin TEXT NOT NULL,
    writes INTEGER NOT NULL CHECK (writes >= 0)
)"""

Origin = Literal["new", "migrated"]


class Meta(BaseModel):
    """What the file says of itself. origin "migrated": an earlier version made the file, and
    nothing before the migration can be checked (ADR 0024)."""

    model_config = ConfigDict(frozen=True)

    format: str
    ledger_id: str
    created_at: float
    origin: str
    writes: int


def has_meta(conn: sqlite3.Connection) -> bool:
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
    ).fetchone()
    return found is not None


def read_meta(conn: sqlite3.Connection) -> Meta | None:
    """The meta row, or None for a file an earlier version wrote (no table yet)."""
    if not has_meta(conn):
        return None
    row = conn.execute(
        f"SELECT format, ledger_id, created_at, origin, writes FROM {TABLE} WHERE one = 1"
    ).fetchone()
    if row is None:
        return None
    return Meta(format=row[0], ledger_id=row[1], created_at=row[2], origin=row[3], writes=row[4])


def ensure_meta(conn: sqlite3.Connection, origin: Origin) -> None:
    """Inside a write transaction: add the table and its row when the file has none."""
    if not has_meta(conn):
        conn.execute(_CREATE)
    conn.execute(
        f"""INSERT OR IGNORE INTO {TABLE} (one, format, ledger_id, created_at, origin, writes)
        VALUES (1, ?, ?, ?, ?, 0)""",
        (FORMAT, uuid.uuid4().hex, time.time(), origin),
    )


def bump(conn: sqlite3.Connection) -> int:
    """Inside a write transaction: count it, and return the count it commits with."""
    conn.execute(f"UPDATE {TABLE} SET writes = writes + 1 WHERE one = 1")
    return int(conn.execute(f"SELECT writes FROM {TABLE} WHERE one = 1").fetchone()[0])
