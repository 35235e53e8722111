"""Making a new ledger: built whole under a temporary name in the same folder, then linked into
place, so the path never holds a half-made or empty ledger. An empty file at the path is
therefore always a lost ledger, never a new one (ADR 0024)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import sqlite3
from pathlib import Path

from stepswitch.ledger.meta import bump, ensure_meta
from stepswitch.ledger.store import LedgerError, configure, guarded, migrate

# Where the folder's file system has no hard links, a rename puts the new file in place.
_NO_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS})


def _build(temp: Path, path: Path, busy_timeout_s: float) -> None:
    with guarded(path):
        conn = sqlite3.connect(temp, timeout=busy_timeout_s, isolation_level=None)
    try:
        # No sync while it is built: nobody sees this file until make_ledger has fsynced it
        # whole and linked it into place.
        configure(conn, path, busy_timeout_s, sync=False)
        with guarded(path):
            conn.execute("BEGIN IMMEDIATE")
            migrate(conn, path)
            ensure_meta(conn, "new")
            bump(conn)
            conn.execute("COMMIT")
    finally:
        conn.close()  # the last connection: SQLite checkpoints and removes the -wal and -shm


def _fsync(path: Path, flags: int = os.O_RDONLY) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _place(temp: Path, path: Path) -> None:
    try:
        os.link(temp, path)
    except FileExistsError:
        return  # another process made it first: theirs is the ledger
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        if not path.exists():
            os.rename(temp, path)  # no link: a process racing in this instant could lose its own
    _fsync(path.parent)


def make_ledger(path: Path, busy_timeout_s: float) -> None:
    """A new ledger at `path`, unless one appears there meanwhile (then that one stands)."""
    temp = path.with_name(f".{path.name}.new-{secrets.token_hex(8)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # 0o666 less the umask, as a file SQLite makes itself would be (mkstemp's is 0o600).
        os.close(os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o666))
    except OSError as exc:
        raise LedgerError(path, f"cannot create it ({exc})", "pick a writable path") from exc
    try:
        _build(temp, path, busy_timeout_s)
        _fsync(temp)
        _place(temp, path)
    except OSError as exc:
        raise LedgerError(path, f"cannot create it ({exc})", "pick a writable path") from exc
    finally:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                temp.with_name(temp.name + suffix).unlink()
