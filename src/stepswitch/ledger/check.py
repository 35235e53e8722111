"""What an open checks before anything reads or writes a row: the file is whole as far as
SQLite and the ledger's own records can tell, and it holds every write its tally saw committed.
Each problem is a one-line LedgerError; nothing here writes (ADR 0024)."""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from stepswitch.ledger.meta import FORMAT, Meta, read_meta
from stepswitch.ledger.readonly import Opened
from stepswitch.ledger.store import (
    LedgerError,
    errors_as,
    has_schema,
    locked_problem,
    schema_version,
)
from stepswitch.ledger.tally import Tally, judge


def _keep(path: Path) -> str:
    return (
        f"restore it from a copy, or move {path.name}* aside (keep them: they are your spend "
        "record) to start a new ledger"
    )


@dataclass(frozen=True)
class Checked:
    meta: Meta | None  # None: an earlier version's file, not yet opened for writing by this one
    version: int  # the schema version the file is at


def _unusable(path: Path, exc: sqlite3.Error) -> LedgerError:
    text = str(exc)
    if (locked := locked_problem(path, text)) is not None:
        return locked
    return LedgerError(
        path, f"not a usable ledger ({text}); the file was left unchanged", _keep(path)
    )


def reading(path: Path) -> contextlib.AbstractContextManager[None]:
    """SQLite's errors while reading, as one-line LedgerErrors."""
    return errors_as(path, _unusable)


def _damaged(path: Path, what: str) -> LedgerError:
    return LedgerError(path, f"is damaged: {what}; the file was left unchanged", _keep(path))


def _pages(opened: Opened, path: Path) -> None:
    size = int(opened.conn.execute("PRAGMA page_size").fetchone()[0])
    try:
        count = int(opened.conn.execute("PRAGMA page_count").fetchone()[0])
    except sqlite3.DatabaseError as exc:  # "malformed": SQLite's word for a short file here
        if "malformed" not in str(exc):
            raise
        raise _damaged(
            path,
            f"SQLite cannot count its pages ({exc}): it was truncated or its header overwritten",
        ) from exc
    if opened.size % size:
        raise _damaged(path, f"{opened.size:,} bytes is not a whole number of {size}-byte pages")
    # With frames in the -wal the main file may lawfully be shorter than the ledger.
    if not opened.wal_frames and count * size > opened.size:
        raise _damaged(
            path,
            f"it is truncated: its header counts {count:,} pages of {size} bytes, "
            f"the file holds {opened.size // size:,}",
        )


def _quick_check(opened: Opened, path: Path) -> None:
    found = [str(r[0]) for r in opened.conn.execute("PRAGMA quick_check(3)").fetchall()]
    if found != ["ok"]:
        raise _damaged(path, f"SQLite's quick_check says {'; '.join(found)}")


def _version(conn: sqlite3.Connection, path: Path) -> int:
    if not has_schema(conn, path):
        raise LedgerError(
            path,
            "is an empty SQLite file, not a ledger (a ledger is made with its tables at once, "
            "so this one lost them or was never one); the file was left unchanged",
            "restore it from a copy; if no run ever used this path, remove it",
        )
    return schema_version(conn, path)


def inspect(opened: Opened, path: Path, tally: Tally | None) -> Checked:
    """Check the file inside the caller's read transaction; `tally` was read before it began,
    so every write it counts was committed before this snapshot."""
    with reading(path):
        _pages(opened, path)
        _quick_check(opened, path)
        version = _version(opened.conn, path)
        meta = read_meta(opened.conn)
    if meta is not None and meta.format != FORMAT:
        raise LedgerError(
            path,
            f"names a ledger format this stepswitch does not know ({meta.format!r})",
            "upgrade stepswitch, or point --ledger at another file",
        )
    judge(path, tally, meta)
    return Checked(meta, version)
