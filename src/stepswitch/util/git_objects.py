"""What a work tree's files are to git: tree entries, blob ids, the paths git can hold, a file
read beneath a folder descriptor without following a link, and git's object listings read back
(util/git_tree.py uses them)."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git knows it in every SHA-1 repository
LINK_MODE = "120000"
SUBMODULE_MODE = "160000"
# What the project's tools leave behind is never part of a change, ignored by the repo or not.
LEFTOVER_PARTS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
MAX_FILE_BYTES = 100 * 1024 * 1024  # a bigger file is left out, named (the largest a host takes)
RACY_NS = 2_000_000_000  # coarser than any file system's timestamps


def leftover(path: str) -> bool:
    """A file the project's tools leave behind (caches, bytecode): never part of a change."""
    pure = PurePosixPath(path)
    return bool(LEFTOVER_PARTS & set(pure.parts)) or pure.suffix == ".pyc"


@dataclass(frozen=True)
class TreeEntry:
    mode: str  # "100644", "100755", LINK_MODE, SUBMODULE_MODE
    oid: str


Entries = dict[str, TreeEntry]  # posix path relative to the tree's top -> entry


def blob_id(data: bytes, sha256: bool) -> str:
    digest = hashlib.sha256 if sha256 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def holdable(path: str) -> bool:
    """Whether git can hold `path` in a tree (no empty, `.`, `..` or `.git` component, no NUL)."""
    parts = path.split("/")
    return "\0" not in path and all(p not in ("", ".", "..") and p.lower() != ".git" for p in parts)


def read_entry(parent: int, name: str) -> tuple[str, bytes, os.stat_result] | None:
    """(mode, content, stat) of a file or link in the folder `parent`; None for anything else
    (gone, a folder, a socket) or a file swapped while it was read."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            target = os.readlink(name, dir_fd=parent)
            return LINK_MODE, os.fsencode(target), info
        if not stat.S_ISREG(info.st_mode):
            return None
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent
        )
    except OSError:
        return None
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    mode = "100755" if opened.st_mode & stat.S_IXUSR else "100644"
    return mode, b"".join(chunks), opened


def stamp(info: os.stat_result) -> tuple[int, ...]:
    # ctime and the inode cannot be set back by a process without privileges: a file rewritten
    # and given its old mtime and size still shows as changed.
    return (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def row_under(record: bytes, prefix: str) -> bool:
    """Whether an `ls-tree -z` row names a path under `prefix`."""
    _meta, _, name = record.partition(b"\t")
    return name.decode("utf-8", "surrogateescape").startswith(prefix)
