"""The temporary folder a cluster worker runs one task run in (`bench.cluster`), and the removal
of those a killed worker left behind.

A run's folder holds a lock file, locked (`flock`) for as long as the run goes; the lock goes
with the process, however it ends. Before each run a worker removes the folders of this user
whose lock no process holds: a worker killed mid-run (`kill -9`, a lost machine's restart)
leaves its copy of the task, its change and its records behind otherwise, one per run. A folder
without a lock file (being made, or made by an older ssw) is left alone; the lock file is locked
before it gets its name, so no folder is ever seen with its lock free while in use.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

PREFIX = "ssw-cluster-"
LOCK_NAME = "in-use.lock"


def _held(folder: Path) -> int:
    """A descriptor holding `folder`'s lock, locked before the file has its name."""
    fd, staged = tempfile.mkstemp(prefix=".lock-", dir=folder)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(staged, folder / LOCK_NAME)
    return fd


def remove_abandoned(parent: Path | None = None) -> list[Path]:
    """Remove the run folders in `parent` (default: the temporary folder) that are this user's
    and whose lock no process holds; the folders removed."""
    parent = parent or Path(tempfile.gettempdir())
    removed = []
    for folder in sorted(parent.glob(f"{PREFIX}*")):
        try:
            if folder.is_symlink() or folder.stat().st_uid != os.getuid():
                continue
            fd = os.open(folder / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:  # no lock file, not ours, gone already
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # in use
            os.close(fd)
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        finally:
            os.close(fd)
    return removed


@contextlib.contextmanager
def run_folder() -> Iterator[Path]:
    """A new folder for one task run, held for as long as the block runs and removed after it
    (the lock let go last); first, the folders killed workers left."""
    remove_abandoned()
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    fd = _held(folder)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)
