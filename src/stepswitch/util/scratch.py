"""Scratch folders in $TMPDIR (`ssw-home-*`, `ssw-bench-*`, `ssw-sandbox-root-*`, `ssw-git-*`,
`ssw-test-config-*`)
that say whether their maker lives.

The maker holds an flock on `<folder>/.ssw-owner` for the folder's life; the kernel drops it when
the process dies (kill -9 too), so a clean-up that can take the lock without waiting knows the
folder is abandoned. The file is made as `.ssw-owner.new`, locked, then renamed: a folder with no
`.ssw-owner` is still being made, and is never removed.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from stepswitch.errors import SswError

OWNER = ".ssw-owner"
HOME_PREFIX = "ssw-home-"  # util/child_env.sandbox_home
BENCH_PREFIX = "ssw-bench-"  # bench/taskrun, as bench/readback.SCRATCH_PREFIX
SANDBOX_ROOT_PREFIX = "ssw-sandbox-root-"  # util/sandbox._stage, for the process's life
GIT_PREFIX = "ssw-git-"  # util/git_checkouts._scratch, for the process's life
TEST_CONFIG_PREFIX = "ssw-test-config-"  # gates/test_config.config_folder, for the process's life
PREFIXES = (HOME_PREFIX, BENCH_PREFIX, SANDBOX_ROOT_PREFIX, GIT_PREFIX, TEST_CONFIG_PREFIX)


def _lock_owner(folder: Path) -> int:
    """Create, lock and publish the owner file; the returned descriptor holds the lock."""
    new = folder / (OWNER + ".new")
    fd = os.open(new, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: nobody else can hold it
        os.write(fd, f"{os.getpid()}\n".encode())
        os.rename(new, folder / OWNER)
    except OSError as exc:
        os.close(fd)
        raise SswError(f"cannot lock the scratch folder {folder}: {exc}") from exc
    return fd


def _new_owned(prefix: str) -> tuple[Path, int]:
    """A new folder in $TMPDIR and the descriptor of its owner lock (removed if it cannot lock)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        fd = _lock_owner(folder)
    except SswError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, fd


@contextlib.contextmanager
def owned_scratch(prefix: str) -> Iterator[Path]:
    """A new folder in $TMPDIR whose owner lock this process holds; removed afterwards."""
    folder, fd = _new_owned(prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        os.close(fd)  # after the removal: a clean-up never sees it unlocked while it exists


def process_scratch(prefix: str) -> Path:
    """A new folder in $TMPDIR whose owner lock this process holds until it exits, when the
    folder is removed (by its maker only: not by a forked child that exits normally)."""
    folder, fd = _new_owned(prefix)
    atexit.register(_release, folder, fd, os.getpid())
    return folder


def _release(folder: Path, fd: int, maker: int) -> None:
    if os.getpid() == maker:
        shutil.rmtree(folder, ignore_errors=True)
    os.close(fd)  # after the removal, as in owned_scratch


def _ours(entry: os.DirEntry[str]) -> bool:
    """A real directory (never a link) of this user, named as ssw names its scratch folders."""
    if not entry.name.startswith(PREFIXES):
        return False
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def _abandoned(folder: Path) -> int | None:
    """The owner file's descriptor, locked, when its owner is gone; None while it lives or
    when there is no owner file (the folder is still being made, or is not ssw's)."""
    try:
        fd = os.open(folder / OWNER, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held (its owner lives), or a file system without flock: it stays
        os.close(fd)
        return None
    return fd


def _remove(folder: Path) -> bool:
    fd = _abandoned(folder)
    if fd is None:
        return False
    try:
        shutil.rmtree(folder)  # rmtree does not follow links inside the folder
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def clean_abandoned(tmpdir: Path | None = None) -> int:
    """Remove the scratch folders in $TMPDIR whose maker is gone; how many were removed."""
    where = Path(tmpdir or tempfile.gettempdir())
    try:
        entries = list(os.scandir(where))
    except OSError:
        return 0
    return sum(_remove(where / e.name) for e in entries if _ours(e))


def cleaned_notice(removed: int, tmpdir: Path | None = None) -> str | None:
    """One line for the user, or None when nothing was removed."""
    if not removed:
        return None
    where = tmpdir or tempfile.gettempdir()
    noun = "folder" if removed == 1 else "folders"
    return f"removed {removed} scratch {noun} of ssw processes that are gone from {where}"
