"""Where a command writes (`--out`): checked before any work, refused with one line (exit 2)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from stepswitch.errors import UsageError


def writable_folder(flag: str, folder: Path) -> Path:
    """`folder` (made later by the writer); a UsageError when it, or the folder it would be made
    in, is a file or cannot be written in. Nothing is made here."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{flag} {folder} is a file, not a folder (fix: name a folder)")
    base = _nearest_existing(folder)
    if not base.is_dir():
        raise UsageError(f"{flag} {folder}: {base} is a file, not a folder (fix: name a folder)")
    try:  # a real write: permission bits alone do not tell (root, read-only mounts, ACLs)
        fd, probe = tempfile.mkstemp(prefix=".ssw-write-check-", dir=base)
    except OSError as exc:
        raise UsageError(f"{flag} {folder}: cannot write in {base}: {_why(exc)}") from None
    os.close(fd)
    os.unlink(probe)
    return folder


def _nearest_existing(path: Path) -> Path:
    absolute = path.absolute()
    return next(p for p in (absolute, *absolute.parents) if p.exists())


def writable_file(flag: str, path: Path) -> Path:
    """`path` for a file to (re)write: a UsageError when it is a folder or its folder is not."""
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a folder, not a file (fix: name a file in it)")
    if not path.parent.is_dir():
        raise UsageError(f"{flag} {path}: no folder {path.parent} to write it in")
    writable_folder(flag, path.parent)
    return path


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
