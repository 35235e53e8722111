"""What `ssw bench import` reads of a folder someone handed the user: only what lies inside it.

A task's folder is copied, before its importer looks at it, into a private folder of regular
files: every name is opened relative to a descriptor of the source folder with no link followed
(util/safe_fs.Beneath), so a link anywhere in it, to outside or inside, refuses that task and
names the link; so do a file with more than one hard link (the user's own file, named anew), a
FIFO, socket or device (refused before any read, from its kind), and a file or task over the
size caps, read through its descriptor at most one byte past the cap (a FIFO or /dev/zero says
size 0). The importers then read only that copy. `.git` folders are neither read nor copied: no
importer uses them.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from stepswitch.util.safe_fs import Beneath, UnsafePath

FILE_CAP = 16 * 1024 * 1024  # bytes of one file: far above any source or test file of a task
TASK_CAP = 64 * 1024 * 1024  # bytes of one task's files together
ENTRY_CAP = 10_000  # files and folders of one task
SKIPPED = frozenset({".git"})
_CHUNK = 1024 * 1024


LINKS_NOT_FOLLOWED = (
    "is a symbolic link, and links are not followed: only what is inside the folder is read"
)


class SourceRefused(ValueError):
    """A task whose files cannot be taken as they are, and why; nothing of it was written."""


@dataclass
class Allowance:
    """What one task may still read: bytes and entries, shared by all its folders."""

    bytes_left: int = TASK_CAP
    entries_left: int = ENTRY_CAP

    def count_entry(self, rel: str) -> None:
        self.entries_left -= 1
        if self.entries_left < 0:
            raise SourceRefused(f"more than {ENTRY_CAP} files and folders (at {rel})")

    def spend(self, size: int, rel: str) -> None:
        self.bytes_left -= size
        if self.bytes_left < 0:
            raise SourceRefused(f"its files pass {TASK_CAP // 2**20} MiB together (at {rel})")


class SourceFolder:
    """A folder the user named, held by descriptor (the name itself may be a link: the user
    chose it); what is below it is read without following any link."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tree = Beneath(root.resolve())

    def close(self) -> None:
        self.tree.close()

    def __enter__(self) -> SourceFolder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def folders(self) -> tuple[list[str], list[str]]:
        """The names of the real folders at the top, and of the links there that lead to a
        folder (each a task to refuse, not to follow), both sorted."""
        folders, links = [], []
        for entry in self.tree.entries("."):
            if entry.kind == "folder":
                folders.append(entry.name)
            elif entry.kind == "link" and (self.root / entry.name).is_dir():
                links.append(entry.name)
        return sorted(folders), sorted(links)

    def exists(self, rel: str) -> bool:
        """Whether anything is at rel (a link counts: reading it is refused, naming it)."""
        try:
            return self.tree.stat(rel) is not None
        except UnsafePath:
            return True

    def read(self, rel: str, allowance: Allowance, shown: str | None = None) -> bytes:
        """The bytes of the regular file rel; SourceRefused naming it (as `shown`, when given)
        when it is not one, leads through a link, or passes a cap."""
        shown = shown or rel
        try:
            found = self.tree.stat(rel)
            if found is None:
                raise SourceRefused(f"no file {shown}")
            _check_kind(shown, found.st_mode)
            fd = self.tree.open(rel, os.O_RDONLY | os.O_NONBLOCK)
        except UnsafePath as err:
            raise SourceRefused(
                f"{shown} {err.why}: only what is inside the folder is read"
            ) from None
        except OSError as err:
            raise SourceRefused(f"cannot read {shown} ({err.strerror})") from None
        try:
            opened = os.fstat(fd)
            _check_kind(shown, opened.st_mode)  # what was opened, not what was looked at
            if opened.st_nlink > 1:  # a hard link can be the user's own file under a new name
                raise SourceRefused(
                    f"{shown} has {opened.st_nlink} hard links: a file that is also elsewhere "
                    "is not read"
                )
            data = _bounded_read(fd, shown)
        finally:
            os.close(fd)
        allowance.spend(len(data), shown)
        return data

    def copy(self, rel: str, dest: Path, allowance: Allowance) -> None:
        """The folder rel, every file in it and below, into dest (new); SourceRefused at the
        first link, FIFO, socket or device, or past a cap, naming it."""
        pending = [(rel, dest)]
        while pending:
            folder, into = pending.pop()
            into.mkdir(parents=True)
            try:
                entries = sorted(self.tree.entries(folder), key=lambda e: e.name)
            except UnsafePath as err:  # the task's folder itself is a link, or one swapped in
                raise SourceRefused(
                    f"{err.path} {err.why}: only what is inside the folder is read"
                ) from None
            except OSError as err:
                raise SourceRefused(f"cannot list {folder} ({err.strerror})") from None
            for entry in entries:
                inner = f"{folder}/{entry.name}"
                shown = inner.removeprefix(f"{rel}/")  # as the task's own path
                allowance.count_entry(shown)
                if entry.kind == "folder" and entry.name not in SKIPPED:
                    pending.append((inner, into / entry.name))
                elif entry.kind == "link":
                    raise SourceRefused(f"{shown} {LINKS_NOT_FOLLOWED}")
                elif entry.kind == "file":
                    data = self.read(inner, allowance, shown)
                    (into / entry.name).write_bytes(data)
                elif entry.kind == "other":
                    raise SourceRefused(f"{shown} is a FIFO, socket or device: only files are read")


def _check_kind(rel: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise SourceRefused(f"{rel} is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise SourceRefused(f"{rel} is a FIFO, socket or device: only files are read")


def _bounded_read(fd: int, rel: str) -> bytes:
    """At most FILE_CAP bytes of fd, read one chunk at a time: a size of 0 in its status proves
    nothing (a FIFO, /proc)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            chunk = os.read(fd, min(_CHUNK, FILE_CAP + 1 - total))
        except BlockingIOError:  # a regular file never says this; something else swapped in
            raise SourceRefused(f"{rel} would block: only files are read") from None
        except OSError as err:
            if err.errno == errno.EINTR:
                continue
            raise SourceRefused(f"cannot read {rel} ({err.strerror})") from None
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > FILE_CAP:
            raise SourceRefused(f"{rel} is larger than {FILE_CAP // 2**20} MiB")


def text_of(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SourceRefused(f"{rel} is not UTF-8 text") from None


LINKED_TASK = "is a symbolic link to a folder, and links are not followed: copy the folder in"
