"""Blobs and trees written straight into a repository's object folder as loose objects: what
`git hash-object -w` and `git update-index` + `git write-tree` store, without a git process
per step (issue 48). A loose object is the one format every git reads: `<kind> <size>\\0<data>`,
zlib-compressed, at `objects/<first two hex digits>/<the rest>`, written under a temporary name
and linked into place, so no reader sees half an object.

Only trees whose every name is plain (`plain_path`) are written here: git refuses some names
(`.git` in its NTFS and HFS spellings, a linked `.gitmodules`) and says so, which the caller
reports, so any other name goes through git itself (util/git_tree.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import zlib
from pathlib import Path

from stepswitch.errors import GitFailed
from stepswitch.util.git_objects import LINK_MODE, Entries, TreeEntry

_Node = dict[str, "TreeEntry | _Node"]  # a folder: its names -> a file's entry or a folder

TREE_MODE = b"40000"  # as git writes a folder's mode inside a tree object
# A name git takes as it is on every file system: ASCII letters, digits and a few marks, dots only
# between them (no trailing dot or space, no `~`, no `:`), nothing spelled like `.git...` but the
# usual files; a link is never named like the files git reads from the tree itself.
_PLAIN = re.compile(r"\.?[A-Za-z0-9_][A-Za-z0-9_+,=@-]*(\.[A-Za-z0-9_+,=@-]+)*\Z")
_USUAL_DOT_GIT = frozenset(
    {
        ".gitignore",
        ".gitattributes",
        ".github",
        ".gitkeep",
        ".gitlab",
        ".gitlab-ci.yml",
        ".gitmodules",
    }
)
_READ_BY_GIT = frozenset({".gitmodules", ".gitattributes", ".gitignore", ".mailmap"})


def plain_path(path: str, mode: str) -> bool:
    """Whether every name of `path` is one git stores without a second look."""
    parts = path.split("/")
    for part in parts:
        if not _PLAIN.match(part):
            return False
        if part.lower().startswith(".git") and part not in _USUAL_DOT_GIT:
            return False
    return not (mode == LINK_MODE and parts[-1].lower() in _READ_BY_GIT)


class LooseObjects:
    """The object folder of the git folder `git_dir` (its common folder: objects and refs)."""

    def __init__(self, git_dir: Path, sha256: bool) -> None:
        self.root = git_dir / "objects"
        self.sha256 = sha256

    def write(self, kind: bytes, data: bytes, oid: str | None = None) -> str:
        """Store one object (when it is not there yet); its id (`oid`, when the caller hashed it
        already). GitFailed when the file system refuses (a full disk), saying why without the
        repository's path."""
        body = b"%s %d\0" % (kind, len(data)) + data
        if oid is None:
            oid = (hashlib.sha256 if self.sha256 else hashlib.sha1)(body).hexdigest()
        try:
            self._store(oid, body)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            raise GitFailed(f"cannot store the work tree's files in the repository: {why}") from exc
        return oid

    def _store(self, oid: str, body: bytes) -> None:
        folder = self.root / oid[:2]
        final = folder / oid[2:]
        if final.exists():
            return
        folder.mkdir(exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(zlib.compress(body, 1))  # git's own level for loose objects
            os.chmod(temp, 0o444)
            with contextlib.suppress(FileExistsError):  # another writer stored the same bytes
                os.link(temp, final)
        finally:
            os.unlink(temp)

    def write_tree(self, entries: Entries) -> str:
        """The tree object of `entries` (paths with plain names), its sub-trees stored first."""
        top: _Node = {}
        for path, entry in entries.items():
            *folders, name = path.split("/")
            node = top
            for folder in folders:
                child = node.setdefault(folder, {})
                if isinstance(child, TreeEntry):
                    raise ValueError(f"{path}: a file stands where a folder should")
                node = child
            node[name] = entry
        return self._tree(top)

    def _tree(self, node: _Node) -> str:
        rows: list[tuple[bytes, bytes, bytes, str]] = []
        for name, child in node.items():
            raw = name.encode()
            if isinstance(child, TreeEntry):
                rows.append((raw, child.mode.encode(), raw, child.oid))
            else:
                rows.append((raw + b"/", TREE_MODE, raw, self._tree(child)))
        rows.sort(key=lambda row: row[0])  # git's order: a folder sorts as its name and '/'
        data = b"".join(
            mode + b" " + raw + b"\0" + bytes.fromhex(oid) for _, mode, raw, oid in rows
        )
        return self.write(b"tree", data)
