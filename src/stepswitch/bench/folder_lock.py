"""One writer per bench folder: `ssw bench run` holds an flock on `<folder>/.bench.lock` for the
bench's life, so a second bench into the same `--out` is refused, naming the holder's pid, before
it opens the ledger or runs anything (two writers ran every task run twice and left a summary
that disagreed with its ledger). The kernel drops the lock when its holder dies (kill -9 too): a
lock file whose holder is gone is taken over, and the caller says so."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from stepswitch.errors import UsageError

LOCK_FILE = ".bench.lock"


def _holder(fd: int) -> str:
    """The pid the lock file names, as written (empty when none was written)."""
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 64).decode("ascii", "replace").strip()


@contextlib.contextmanager
def hold_bench_folder(root: Path) -> Iterator[str | None]:
    """Hold `root`'s lock while the block runs; yields the pid a dead holder left in the lock
    file (a stale lock now taken over), else None. Another live holder: UsageError."""
    path = root / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise UsageError(f"cannot lock the bench folder {root}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = _holder(fd) or "unknown"
            raise UsageError(
                f"another `ssw bench run` (pid {who}) is writing {root}: wait for it to end, "
                "or give this one another --out"
            ) from None
        stale = _holder(fd) or None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield stale
        finally:
            os.ftruncate(fd, 0)  # an ended bench leaves no pid to take for a dead one
    finally:
        os.close(fd)  # drops the lock
