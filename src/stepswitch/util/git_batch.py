"""One `git cat-file --batch` for a run: the objects a run reads (its base commit's trees and
blobs) asked of one long-lived git process instead of one process per question (issue 48).

It only reads: a dying ssw (Ctrl-C, a full disk, a kill) loses nothing by it, and the process
ends by itself when its input closes, which the kernel does when ssw's process ends however it
ends. It runs in its own session, so a Ctrl-C at the terminal does not end it under a run that is
still committing; `close()` ends it at once (the run's work tree does, when it is left).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from stepswitch.errors import GitFailed
from stepswitch.util.git import GIT_TIMEOUT_S, git_argv_env
from stepswitch.util.git_pipe import PipedGit, send

Object = tuple[str, str, bytes]  # (object id, kind, content)


class ObjectReader(PipedGit):
    """`git cat-file --batch` in the repository whose git folder is `git_dir`, started on the
    first read (or by `started()`). Names are object ids or anything git resolves to one
    (`<commit>:<path>`)."""

    def __init__(self, cwd: Path, git_dir: Path, timeout: float = GIT_TIMEOUT_S) -> None:
        super().__init__(cwd, self._command, timeout)
        self.git_dir = git_dir
        self._buffer = b""

    def _command(self) -> tuple[list[str], dict[str, str]]:
        return git_argv_env(self.cwd, "cat-file", "--batch", git_dir=self.git_dir)

    def started(self) -> subprocess.Popen[bytes]:
        before = self._proc
        proc = super().started()
        if proc is not before:
            self._buffer = b""  # a new process: nothing of the old one's answers is read
        return proc

    def read_many(self, names: Iterable[str]) -> list[Object | None]:
        """(object id, kind, content) for each name, in order; None for a name git cannot
        resolve. The names are written by a thread while the answers are read, so neither pipe
        fills up whatever their number."""
        wanted = list(names)
        if not wanted:
            return []
        if any("\n" in n or not n for n in wanted):
            raise GitFailed("git cat-file: an object name holding a newline")
        return self.answer(lambda: self._read_many(wanted))

    def _read_many(self, wanted: list[str]) -> list[Object | None]:
        proc = self.started()
        request = "".join(n + "\n" for n in wanted).encode("utf-8", "surrogateescape")
        writer = send(proc, request)
        deadline = time.monotonic() + self.timeout
        try:
            return [self._answer(proc, deadline) for _ in wanted]
        finally:
            if writer is not None:
                writer.join()

    def read(self, name: str) -> Object | None:
        return self.read_many([name])[0]

    def _answer(self, proc: subprocess.Popen[bytes], deadline: float) -> Object | None:
        header = self._take_line(proc, deadline).decode("utf-8", "surrogateescape")
        parts = header.split(" ")
        if len(parts) == 2 and parts[1] in ("missing", "ambiguous"):
            return None
        if len(parts) != 3 or not parts[2].isdigit():
            raise GitFailed(f"git cat-file answered {header[:200]!r}")
        oid, kind, size = parts
        data = self._take(proc, int(size) + 1, deadline)  # the content and its newline
        return oid, kind, data[:-1]

    def _fill(self, proc: subprocess.Popen[bytes], deadline: float) -> None:
        self._buffer += self.read_some(proc, deadline, "git cat-file")

    def _take_line(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        while (end := self._buffer.find(b"\n")) < 0:
            self._fill(proc, deadline)
        line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
        return line

    def _take(self, proc: subprocess.Popen[bytes], size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            self._fill(proc, deadline)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def close(self) -> None:
        """End the process (its input closed: it exits; killed if it does not at once)."""
        self._buffer = b""
        super().close()


def commit_tree_id(found: Object | None) -> str | None:
    """The tree id a commit object names on its first line; None for anything else."""
    if found is None or found[1] != "commit":
        return None
    first = found[2].split(b"\n", 1)[0]
    return first[5:].decode() if first[:5] == b"tree " else None


def _canonical_mode(mode: int) -> int:
    """The mode git shows for a tree entry's stored one (tree-walk.c's canon_mode)."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind in (0o120000, 0o040000):
        return kind
    return 0o160000


_KINDS = {0o040000: b"tree", 0o160000: b"commit"}


def tree_listing(reader: ObjectReader, spec: str, sha256: bool) -> bytes:
    """What `git ls-tree -r -t -z --full-tree SPEC` prints, read from tree objects through
    `reader`: every entry, a folder before what it holds, in the tree's own order. GitFailed
    when `spec` names no commit or tree."""
    found = reader.read(spec)
    if found is not None and found[1] == "commit":
        tree = commit_tree_id(found)
        found = reader.read(tree) if tree is not None else None
    if found is None or found[1] != "tree":
        raise GitFailed(f"git ls-tree failed: {spec} names no commit or tree")
    width = 32 if sha256 else 20
    rows: list[bytes] = []

    def walk(data: bytes, prefix: bytes) -> None:
        at = 0
        while at < len(data):
            # As git's tree-walk reads a tree: it refuses the same malformed ones.
            space, nul = data.find(b" ", at), data.find(b"\0", at)
            if not 0 < space - at < nul - at or nul + 1 + width > len(data):
                raise GitFailed(f"git ls-tree failed: {spec}: too-short tree object")
            if not data[at:space].isdigit() or b"8" in data[at:space] or b"9" in data[at:space]:
                raise GitFailed(f"git ls-tree failed: {spec}: malformed mode in tree entry")
            if nul == space + 1:
                raise GitFailed(f"git ls-tree failed: {spec}: empty filename in tree entry")
            mode = _canonical_mode(int(data[at:space], 8))
            name = prefix + data[space + 1 : nul]
            oid = data[nul + 1 : nul + 1 + width].hex()
            at = nul + 1 + width
            rows.append(b"%06o %s %s\t%s\0" % (mode, _KINDS.get(mode, b"blob"), oid.encode(), name))
            if mode == 0o040000:
                sub = reader.read(oid)
                if sub is None or sub[1] != "tree":
                    raise GitFailed(f"git ls-tree failed: tree {oid} is missing")
                walk(sub[2], name + b"/")

    walk(found[2], b"")
    return b"".join(rows)
