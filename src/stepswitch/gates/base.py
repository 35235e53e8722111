"""The base commit as the gates read it: from the repository's object store, never the worktree.

The repository is named once, when the suite is made and before any edit (a run hands in its
TreeGit; `ssw gates` finds the user's checkout), and every later read names its git folder with
replacement objects off, so nothing the worktree holds (a `.git` file, a `git replace`) changes
what is read. Files are compared with the commit's tree by their content (`blob_id`), never
through an index the agent's commands could rewrite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import UnsafeCheckout, UsageError
from stepswitch.util.git_batch import Object, tree_listing
from stepswitch.util.git_checkouts import checkout_tree
from stepswitch.util.git_objects import LINK_MODE, SUBMODULE_MODE
from stepswitch.util.git_objects import blob_id as _blob_id
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.tree_checkout import TREE_MODE

__all__ = ["LINK_MODE", "SUBMODULE_MODE", "BaseTree", "BaseUnreadable", "Entry", "blob_id"]

_FULL_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")


class BaseUnreadable(Exception):
    """The base commit (or a file in it) cannot be read: the message says why."""


@dataclass(frozen=True)
class Entry:
    """A file of the base commit's tree."""

    mode: str  # "100644", "100755", LINK_MODE (a symbolic link), SUBMODULE_MODE
    oid: str  # content is compared by blob id


def is_commit_id(rev: str) -> bool:
    """Whether `rev` is a full object id (a run's base commit), not a name like HEAD."""
    return _FULL_ID.match(rev) is not None


def blob_id(data: bytes, like: str) -> str:
    """git's object id of a blob holding `data`, in the hash `like` (an existing id) uses."""
    return _blob_id(data, sha256=len(like) == 64)


# The blobs a BaseTree keeps after reading them: configuration files and conftests, not data.
KEPT_BLOB_BYTES = 256 * 1024
KEPT_BLOBS = 256


class BaseTree:
    """Reads of commits in the repository of `tree` (a run's work tree or a user's checkout)."""

    def __init__(self, tree: TreeGit) -> None:
        self.tree = tree
        self.root = tree.work_tree / tree.prefix if tree.prefix else tree.work_tree
        self.git_dir = tree.git_dir  # objects and refs
        self.prefix = tree.prefix  # root's path inside the repository ("" at its top, else "sub/")
        # What git said of objects, which never change once written: a gate run asks the same
        # questions of its base commit at every stage.
        self._entries: dict[str, dict[str, Entry]] = {}
        self._commits: dict[str, str] = {}  # a commit id as given -> its full id
        self._blobs: dict[str, bytes] = {}  # the small blobs read, by id

    @classmethod
    def find(cls, root: Path) -> BaseTree | None:
        """The user's checkout holding `root`, or None when it is in none (a plain folder)."""
        try:
            tree = checkout_tree(root)
        except UnsafeCheckout:
            raise  # a commit made to write outside its folder: refused, not taken for no checkout
        except UsageError:
            return None
        return cls(tree) if tree is not None else None

    def _read(self, names: list[str]) -> list[Object | None]:
        """The objects `names` through the tree's one `git cat-file --batch` (None: no such)."""
        try:
            return self.tree.reader().read_many(names)
        except UsageError as exc:
            raise BaseUnreadable(str(exc)) from exc

    def commit(self, rev: str) -> str:
        """The full id of commit `rev` (an id, or HEAD: the tree's own base commit).
        Raises BaseUnreadable."""
        commit = self.tree.base_commit if rev == "HEAD" else rev
        if commit in self._commits:
            return self._commits[commit]
        found = self._read([f"{commit}^{{commit}}"])[0] if "\n" not in commit else None
        if found is None:
            raise BaseUnreadable(f"cannot read the base commit {rev!r}: no such commit")
        if is_commit_id(commit):  # a name (a branch) can move; an id cannot
            self._commits[commit] = found[0]
        return found[0]

    def entries(self, commit: str) -> dict[str, Entry]:
        """Every file of `commit` under root (paths relative to root). Raises BaseUnreadable."""
        if commit in self._entries:
            return self._entries[commit]
        tree = f"{commit}:{self.prefix.rstrip('/')}" if self.prefix else commit
        try:
            listing = tree_listing(self.tree.reader(), tree, self.tree.sha256)
        except UsageError as exc:
            raise BaseUnreadable(f"cannot list the base commit {commit[:12]}: {exc}") from exc
        out: dict[str, Entry] = {}
        for record in listing.split(b"\0"):
            meta, _, name = record.partition(b"\t")
            mode, _kind, oid = meta.decode().split() if meta else ("", "", "")
            if mode and mode != TREE_MODE:  # files, links and submodules, as `ls-tree -r` lists
                out[name.decode("utf-8", "surrogateescape")] = Entry(mode, oid)
        self._entries[commit] = out
        return out

    def blob(self, oid: str) -> bytes:
        if oid in self._blobs:
            return self._blobs[oid]
        found = self._read([oid])[0]
        if found is None or found[1] != "blob":
            raise BaseUnreadable(f"cannot read object {oid[:12]}: no such blob")
        if len(found[2]) <= KEPT_BLOB_BYTES and len(self._blobs) < KEPT_BLOBS:
            self._blobs[oid] = found[2]
        return found[2]

    def read(self, commit: str, path: str) -> bytes | None:
        """The bytes of `path` (relative to root) at `commit`; None when the commit has no such
        file. Raises BaseUnreadable."""
        entry = self.entries(commit).get(path.strip().removeprefix("./"))
        if entry is None or entry.mode in (LINK_MODE, SUBMODULE_MODE):
            return None
        return self.blob(entry.oid)

    def text(self, commit: str, path: str) -> str | None:
        data = self.read(commit, path)
        return None if data is None else data.decode("utf-8", "replace")

    def worktree_paths(self) -> tuple[set[str], set[str]]:
        """What git sees in the worktree, relative to root: every file it does not ignore; and,
        apart, folders that hold another repository (git does not look inside them).
        Raises BaseUnreadable."""
        try:
            return self.tree.listed_paths()
        except UsageError as exc:
            raise BaseUnreadable(f"cannot list the worktree's files: {exc}") from exc
