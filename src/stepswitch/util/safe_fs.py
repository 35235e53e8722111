"""Files and folders beneath a root, opened without ever following a symbolic link.

The file tools run on the host while agent code in the sandbox may change the worktree at any
moment, so a path checked first and opened by name afterwards can lead elsewhere by then. Here a
path is resolved and opened in one step, relative to a descriptor of the root: by openat2 with
RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it (Linux >= 5.6), else by one
O_NOFOLLOW open per name, each relative to the folder opened before it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import secrets
import stat
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stepswitch.util.closing import ClosesOnExit
from stepswitch.util.openat2 import kernel_has_openat2, openat2

# Tests set this to False to run the component walk on a kernel that has openat2.
PREFER_OPENAT2 = True

_FOLDER = os.O_RDONLY | os.O_DIRECTORY
_SNIFF = os.O_RDONLY | os.O_NONBLOCK  # O_NONBLOCK: opening a FIFO must not hang the tool
# What an O_NOFOLLOW open of a link says: ELOOP (Linux, macOS), ENOTDIR with O_DIRECTORY
# (Linux), EMLINK (FreeBSD).
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})
# What a sub-folder's open says when it is a link, a file or gone since it was listed, or may
# not be read: the walk skips it, as os.walk does.
_GONE_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, *_LINK_ERRNOS})


class UnsafePath(Exception):
    """A path that would follow a symbolic link or leave the root; nothing was opened through it."""

    def __init__(self, path: str, why: str, at: str | None = None) -> None:
        self.path = path
        self.why = why  # e.g. "leads through a symbolic link at 'lib', and links are not followed"
        self.at = at  # the link's root-relative path, when known
        super().__init__(f"{path!r} {why}")


def _through_link(asked: str, at: str | None) -> UnsafePath:
    """The refusal of the path asked for, at the link found on its way (None: not known)."""
    if at is None:
        why = "leads through a symbolic link, and links are not followed"
    elif at == _joined(components(asked)):
        why = "is a symbolic link, and links are not followed"
    else:
        why = f"leads through a symbolic link at {at!r}, and links are not followed"
    return UnsafePath(asked, why, at)


def components(rel: str) -> list[str]:
    """rel's names ([] for the root); refused unless rel is a plain path below the root."""
    if "\0" in rel:
        raise UnsafePath(rel, "contains a NUL character")
    if rel.startswith("/"):
        raise UnsafePath(rel, "is absolute, not relative to the root")
    names = [name for name in rel.split("/") if name not in ("", ".")]
    if ".." in names:  # refused as text: no open is ever asked to climb
        raise UnsafePath(rel, "climbs out of the root with '..'")
    return names


def _joined(names: list[str]) -> str:
    return "/".join(names) or "."


def _child(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def _is_link_or_folder(name: str, folder_fd: int) -> bool:
    try:
        mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
    except OSError:
        return False
    return stat.S_ISLNK(mode) or stat.S_ISDIR(mode)


def _open_name(asked: str, names: list[str], i: int, folder_fd: int, flags: int, mode: int) -> int:
    """names[i] opened inside folder_fd, never through a link; UnsafePath (for the path asked
    for, of which names are the start) when it is one."""
    name = names[i]
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder_fd)
    except OSError as err:
        if err.errno not in _LINK_ERRNOS:
            raise
        # ENOTDIR from a name that is a folder now means it was not one an instant ago: swapped.
        if err.errno == errno.ELOOP or _is_link_or_folder(name, folder_fd):
            raise _through_link(asked, _joined(names[: i + 1])) from None
        raise


Kind = Literal["folder", "file", "link", "other"]


@dataclass(frozen=True)
class Entry:
    name: str
    kind: Kind


@dataclass
class _Frame:
    rel: str
    fd: int
    pending: list[str] | None = None  # sub-folders still to visit, the next one last


def _listing(folder_fd: int) -> tuple[list[str], list[str]]:
    """The regular files and the real sub-folders of a folder, both sorted; links are neither."""
    files: list[str] = []
    folders: list[str] = []
    with os.scandir(folder_fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                files.append(entry.name)
    return sorted(files), sorted(folders)


def entry_kind(entry: os.DirEntry[str]) -> Kind:
    """What a folder entry is, never following a link."""
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    return "file" if entry.is_file(follow_symlinks=False) else "other"


def _regular_file(fd: int, rel: str) -> io.BufferedReader:
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), rel)
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", rel)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _replace(folder_fd: int, name: str, rel: str, data: bytes) -> bool:
    """name's content swapped for data in one rename inside folder_fd; whether name was there."""
    try:
        old: os.stat_result | None = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    if old is not None and stat.S_ISLNK(old.st_mode):
        raise _through_link(rel, rel)
    if old is not None and stat.S_ISDIR(old.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), rel)
    temp = f".ssw-write-{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o666, dir_fd=folder_fd)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if old is not None:  # a new file gets 0o666 less the umask, as open() gives it
                os.fchmod(out.fileno(), stat.S_IMODE(old.st_mode) & 0o777)
        # rename replaces the entry itself: a link put there meanwhile is replaced, not followed.
        os.rename(temp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder_fd)
        raise
    return old is not None


class Beneath(ClosesOnExit):
    """A root folder held open by descriptor. Every path below it is opened relative to that
    descriptor in one step, and a symbolic link anywhere on the way raises UnsafePath."""

    def __init__(self, root: Path, *, use_openat2: bool | None = None) -> None:
        self.root = root
        self.fd = os.open(root, _FOLDER | os.O_NOFOLLOW | os.O_CLOEXEC)
        if use_openat2 is None:
            use_openat2 = PREFER_OPENAT2 and kernel_has_openat2()
        self.uses_openat2 = use_openat2

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def open(self, rel: str, flags: int = os.O_RDONLY, mode: int = 0) -> int:
        """A descriptor of rel, opened without following any link; the caller closes it."""
        return self._open(components(rel), flags, mode, rel)

    def _open(self, names: list[str], flags: int, mode: int, asked: str) -> int:
        """The descriptor of names below the root; a refusal speaks of the path asked for, which
        names start (the folder of a file to write is opened for the file's sake)."""
        if not self.uses_openat2:
            return self._walk_open(asked, names, flags, mode)
        try:
            return openat2(self.fd, _joined(names), flags, mode)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.EXDEV):
                raise _through_link(asked, self._first_link(asked, names)) from None
            raise

    def _walk_open(self, rel: str, names: list[str], flags: int, mode: int) -> int:
        if not names:
            return os.open(".", flags | os.O_CLOEXEC, mode, dir_fd=self.fd)
        folder = self.fd
        try:
            for i in range(len(names) - 1):
                inner = _open_name(rel, names, i, folder, _FOLDER, 0)
                if folder != self.fd:
                    os.close(folder)
                folder = inner
            return _open_name(rel, names, len(names) - 1, folder, flags, mode)
        finally:
            if folder != self.fd:
                os.close(folder)

    def _first_link(self, rel: str, names: list[str]) -> str | None:
        """Which name is the link openat2 refused, for the message (None: it changed since)."""
        try:
            os.close(self._walk_open(rel, names, _SNIFF, 0))
        except UnsafePath as err:
            return err.at
        except OSError:
            pass
        return None

    def stat(self, rel: str) -> os.stat_result | None:
        """rel's own status, a link refused rather than followed; None when nothing is there."""
        names = components(rel)
        if not names:
            return os.fstat(self.fd)
        try:
            folder = self._open(names[:-1], _FOLDER, 0, rel)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            found = os.stat(names[-1], dir_fd=folder, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        finally:
            os.close(folder)
        if stat.S_ISLNK(found.st_mode):
            raise _through_link(rel, rel)
        return found

    def open_file(self, rel: str) -> io.BufferedReader:
        """rel opened for reading; IsADirectoryError for a folder, OSError for a FIFO or device."""
        return _regular_file(self.open(rel, _SNIFF), rel)

    def entries(self, rel: str) -> list[Entry]:
        """The entries of the folder rel, each with its own kind: a link is listed, not followed."""
        fd = self.open(rel, _FOLDER)
        try:
            with os.scandir(fd) as found:
                return [Entry(entry.name, entry_kind(entry)) for entry in found]
        finally:
            os.close(fd)

    def files(self, rel: str, skip: frozenset[str] = frozenset()) -> Generator[str, None, None]:
        """Root-relative paths of the regular files under rel (rel itself when it is one), sorted,
        each folder's files before its sub-folders; links are neither listed nor entered, nor are
        the sub-folders named in skip. Iterative, so a deep tree cannot exhaust the stack."""
        top = _joined(components(rel))
        found = self.stat(top)
        if found is not None and stat.S_ISREG(found.st_mode):
            yield top
        if found is None or not stat.S_ISDIR(found.st_mode):
            return
        stack = [_Frame(top, self.open(top, _FOLDER))]
        try:
            while stack:
                frame = stack[-1]
                if frame.pending is None:
                    names, folders = _listing(frame.fd)
                    frame.pending = [name for name in reversed(folders) if name not in skip]
                    yield from (_child(frame.rel, name) for name in names)
                elif frame.pending:
                    name = frame.pending.pop()
                    try:
                        inner = os.open(
                            name, _FOLDER | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=frame.fd
                        )
                    except OSError as err:  # a link, a file or nothing now: not entered
                        if err.errno not in _GONE_ERRNOS:
                            raise
                        continue
                    stack.append(_Frame(_child(frame.rel, name), inner))
                else:
                    os.close(stack.pop().fd)
        finally:
            for frame in stack:
                os.close(frame.fd)

    def write(self, rel: str, data: bytes, *, make_folders: bool = False) -> bool:
        """rel's content replaced by data atomically (a temporary file in the same folder, renamed
        over it, keeping its permission bits); whether a file was there before. Not fsynced: a
        run's work tree is scratch, kept by its commit (ADR 0074), and a crashed process leaves
        the old content or the new, never half of either.
        make_folders creates missing folders on the way, refusing links as everywhere else."""
        names = components(rel)
        if not names:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), rel)
        if make_folders:
            folder = self._made_folders(rel, names)
        else:
            folder = self._open(names[:-1], _FOLDER, 0, rel)
        try:
            return _replace(folder, names[-1], rel, data)
        finally:
            os.close(folder)

    def _made_folders(self, rel: str, names: list[str]) -> int:
        """A descriptor of the folder holding names[-1], creating the missing ones on the way."""
        folder = os.dup(self.fd)
        try:
            for i in range(len(names) - 1):
                with contextlib.suppress(FileExistsError):  # a link there counts as existing
                    os.mkdir(names[i], dir_fd=folder)
                inner = _open_name(rel, names, i, folder, _FOLDER, 0)
                os.close(folder)
                folder = inner
        except BaseException:
            os.close(folder)
            raise
        return folder


def read_beneath(root: Path, rel: str, limit: int = 64 * 1024 * 1024) -> str:
    """The text of the regular file `rel` under `root` (UTF-8, undecodable bytes replaced), read
    without following a link anywhere, `root` included; at most `limit` bytes."""
    with Beneath(root) as tree, tree.open_file(rel) as handle:
        return handle.read(limit).decode("utf-8", errors="replace")
