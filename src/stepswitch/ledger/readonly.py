"""Opening the ledger so that nothing is created, written or settled: what reports and every
check before a write use. SQLite's own read-only mode (`mode=ro`) still makes an empty -wal and
a -shm beside a ledger that has none, and cannot read a -wal without a -shm on a read-only
mount, so the way in depends on what is there (ADR 0024):

- no -wal, or an empty one: `immutable=1`, the main file alone (it is the whole ledger), then
  checked unchanged afterwards, since immutable takes no lock (never while this process writes
  the file: `hold`);
- a -wal with a -shm (a live writer, or one that was killed): `mode=ro`, SQLite's shared
  reading; it may rebuild the -shm (its index of the -wal), never the ledger or the -wal;
- a -wal without a -shm (nobody can be writing it): a private copy of both, read there.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import quote

from stepswitch.ledger.store import BUSY_TIMEOUT_S, LedgerError
from stepswitch.ledger.tally import refuse_lost_file

T = TypeVar("T")
# Files this process holds write connections to. An immutable connection takes no lock and its
# close drops every POSIX lock the process holds on the file, the writer's too: not for those.
_WRITING: Counter[tuple[int, int]] = Counter()
How = Literal["immutable", "shared", "copy"]
RETRIES = 3  # an immutable read that saw the files change is read again this many times


@dataclass(frozen=True)
class Opened:
    conn: sqlite3.Connection
    how: How
    wal_frames: bool  # the -wal holds frames: the main file alone is not the whole ledger
    size: int  # the main file's bytes


def hold(path: Path) -> tuple[int, int]:
    """Say this process writes `path` until `release`: its reads then go through `mode=ro`."""
    st = path.stat()
    key = (st.st_dev, st.st_ino)
    _WRITING[key] += 1
    return key


def release(key: tuple[int, int]) -> None:
    _WRITING[key] -= 1
    if _WRITING[key] <= 0:
        del _WRITING[key]


def companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _stamp(path: Path) -> tuple[int, int, int, int]:
    """What changes when a writer touches the files: the main file and the -wal's size."""
    try:
        st = path.stat()
    except OSError as exc:
        raise LedgerError(
            path, f"went away while it was read ({exc})", "check who moves it"
        ) from exc
    try:
        wal = companion(path, "-wal").stat().st_size
    except FileNotFoundError:
        wal = -1
    return st.st_ino, st.st_size, st.st_mtime_ns, wal


def main_file(path: Path) -> os.stat_result:
    """The main file's stat, or a one-line error when it is missing, not a file or empty."""
    try:
        st = path.stat()
    except FileNotFoundError:
        refuse_lost_file(path)  # a tally or a -wal left behind: say the ledger was lost
        missing = "run a task first, or pass --ledger"
        raise LedgerError(path, "no ledger at this path", missing) from None
    except OSError as exc:
        raise LedgerError(path, f"cannot be read ({exc})", "make it readable") from exc
    if not path.is_file():
        raise LedgerError(path, "is not a file", "point --ledger at a file")
    if st.st_size == 0:
        raise LedgerError(
            path,
            "is empty (0 bytes), and a ledger is never empty once made: its spend record was "
            "lost (truncated or overwritten); the file was left unchanged",
            "restore it from a copy; if no run ever used this path, remove it and the next run "
            "makes a new ledger",
        )
    return st


def _uri(path: Path, query: str) -> str:
    return f"file:{quote(str(path.resolve()))}?{query}"


def _run(
    path: Path,
    uri: str,
    how: How,
    wal_frames: bool,
    read: Callable[[Opened], T],
    busy_timeout_s: float,
) -> T:
    try:
        conn = sqlite3.connect(
            uri, uri=True, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise LedgerError(path, f"cannot be opened to read ({exc})", "make it readable") from exc
    try:
        return read(Opened(conn, how, wal_frames, path.stat().st_size))
    finally:
        conn.close()


def _private_copy(path: Path, read: Callable[[Opened], T], busy_timeout_s: float) -> T:
    with tempfile.TemporaryDirectory(prefix="ssw-ledger-") as scratch:
        copy = Path(scratch) / path.name
        try:
            shutil.copyfile(path, copy)
            shutil.copyfile(companion(path, "-wal"), companion(copy, "-wal"))
        except OSError as exc:
            raise LedgerError(
                path,
                f"its -wal has no -shm, and a copy of both to read could not be made ({exc})",
                "free space in the temporary folder ($TMPDIR), or open it once with ssw run",
            ) from exc
        return _run(path, _uri(copy, "mode=ro"), "copy", True, read, busy_timeout_s)


def read_only(path: Path, read: Callable[[Opened], T], busy_timeout_s: float = BUSY_TIMEOUT_S) -> T:
    """`read(opened)` on a connection that can only read; errors are one-line LedgerErrors."""
    for attempt in range(RETRIES + 1):
        st = main_file(path)
        before = _stamp(path)
        if before[3] <= 0 and (st.st_dev, st.st_ino) not in _WRITING:
            try:
                uri = _uri(path, "immutable=1")
                result = _run(path, uri, "immutable", False, read, busy_timeout_s)
            except (LedgerError, sqlite3.Error):
                if attempt < RETRIES and _stamp(path) != before:
                    continue  # a writer came by while the file was read without a lock
                raise
            if _stamp(path) == before:
                return result
            continue
        if companion(path, "-shm").exists() or (st.st_dev, st.st_ino) in _WRITING:
            return _run(path, _uri(path, "mode=ro"), "shared", True, read, busy_timeout_s)
        return _private_copy(path, read, busy_timeout_s)
    raise LedgerError(
        path,
        "kept changing while it was read without a lock",
        "try again when the processes writing it are done",
    )
