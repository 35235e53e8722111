"""A commit's files written into an empty folder, and nowhere else.

A tree is an object anyone can make (`git mktree` takes a name `..`, `.git`, or the same name
twice), so its paths are checked, all of them, before anything is written: every name one git
could hold, no name holding `/`, no path both a file and a folder. Then every folder is made and
opened without following a link, and every file created new beneath its folder's descriptor, so a
link in the folder cannot lead a write elsewhere either (docs/decisions/0046-...).
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from stepswitch.errors import UnsafeCheckout
from stepswitch.util.closing import ClosesOnExit
from stepswitch.util.git_objects import LINK_MODE, SUBMODULE_MODE, Entries, TreeEntry, holdable
from stepswitch.util.text import escape_controls

TREE_MODE = "040000"
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# What an open that met a link or a file where a folder was wanted says (see util/safe_fs.py).
_NOT_A_FOLDER = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK, errno.EEXIST})


def _refused(rev: str, path: str, why: str) -> UnsafeCheckout:
    shown = escape_controls(path, keep_newlines=False)
    return UnsafeCheckout(f"{rev[:12]} holds the path {shown!r}, which {why}; refused")


def listed_entries(listing: bytes, rev: str) -> Entries:
    """The files, links and submodules of `git ls-tree -r -t -z` output, paths relative to the
    tree listed; UnsafeCheckout naming the first path a check-out could not write beneath its
    folder."""
    entries: Entries = {}
    folders: set[str] = set()
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, raw = record.partition(b"\t")
        mode, _kind, oid = meta.decode().split()
        path = raw.decode("utf-8", "surrogateescape")
        if not holdable(path):
            raise _refused(rev, path, "git cannot hold (an empty name, '.', '..' or '.git')")
        if path in entries or path in folders:
            raise _refused(rev, path, "the tree names twice")
        parent = path.rpartition("/")[0]
        if parent and parent not in folders:  # git lists a folder before what it holds
            raise _refused(rev, path, "has a name holding '/' or a file for a folder")
        if mode == TREE_MODE:
            folders.add(path)
        else:
            entries[path] = TreeEntry(mode, oid)
    return entries


class FolderWriter(ClosesOnExit):
    """Writes entries into the empty folder `root`, each beneath its folder's descriptor: no
    link is followed, no file already there is written over. One folder is held open at a time,
    so a deep tree costs no more descriptors than a flat one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._top = os.open(root, _FOLDER)
        self._here: tuple[str, int] = ("", self._top)

    def close(self) -> None:
        self._leave()
        os.close(self._top)

    def write(self, path: str, mode: str, data: bytes) -> os.stat_result:
        """Write one entry (a file, a link, a submodule's empty folder); its status."""
        folder, _, name = path.rpartition("/")
        parent = self._folder(folder, path)
        try:
            if mode == SUBMODULE_MODE:
                os.mkdir(name, dir_fd=parent)
            elif mode == LINK_MODE:
                os.symlink(os.fsdecode(data), name, dir_fd=parent)
            else:
                fd = os.open(name, _NEW_FILE, 0o666, dir_fd=parent)
                try:
                    with os.fdopen(fd, "wb", closefd=False) as out:
                        out.write(data)
                    if mode == "100755":
                        os.fchmod(fd, 0o755)
                    return os.fstat(fd)
                finally:
                    os.close(fd)
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError as err:
            if err.errno in _NOT_A_FOLDER:
                raise self._in_the_way(path) from None
            raise

    def _folder(self, folder: str, path: str) -> int:
        """The descriptor of `folder`, made as needed, reached without following a link."""
        if folder == self._here[0]:
            return self._here[1]
        self._leave()
        fd = os.dup(self._top)
        try:
            for name in folder.split("/") if folder else ():
                with contextlib.suppress(FileExistsError):  # a link there is refused below
                    os.mkdir(name, dir_fd=fd)
                try:
                    inner = os.open(name, _FOLDER, dir_fd=fd)
                except OSError as err:
                    if err.errno in _NOT_A_FOLDER:
                        raise self._in_the_way(path) from None
                    raise
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        self._here = (folder, fd)
        return fd

    def _leave(self) -> None:
        if self._here[1] != self._top:
            os.close(self._here[1])
        self._here = ("", self._top)

    def _in_the_way(self, path: str) -> UnsafeCheckout:
        shown = escape_controls(path, keep_newlines=False)
        return UnsafeCheckout(
            f"{shown!r} would be written through a link or over a file already in "
            f"{self.root}; refused"
        )
