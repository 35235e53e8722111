"""What a work tree holds by name and kind, and the ignore rules git reads for it: enough to
tell, without a git process, that git's listing of the tree (`ls-files --others
--exclude-standard`) cannot have changed since an earlier one (issue 48).

Whether git lists a path depends on the ignore rules (every `.gitignore` in the tree, the
repository's `info/exclude` and configuration, the user's excludes file), on the kind of the
path and of the folders above it (a pattern ending in `/` matches folders only), and on folders
holding another repository (a `.git` in them). So when the rules are byte for byte the same,
the tree holds no `.git` at all, and every (path, kind) of the tree now was there at the earlier
listing, each file now is listed exactly when it was then: the earlier listing, less what is
gone, is git's answer. A new path, or a path of another kind, under the same rules: only those
are asked of the run's one `git check-ignore` (util/ignore_check.py, ADR 0090). A changed rule
starts a fresh checker; a `.git` anywhere, a tree too big: git lists the tree again.
"""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import GitFailed, GitTimedOut
from stepswitch.util.ignore_check import IgnoreChecker
from stepswitch.util.safe_fs import entry_kind

# A bigger tree (a vendored folder, a virtualenv in it) is listed by git each time: walking it
# here would cost about what git's own listing costs.
MAX_ENTRIES = 5_000
# More new files than this (a run's first listing of a big tree) cost the checker more than git's
# own listing of the whole tree: git lists it then.
MAX_ASKED = 1_000
_IGNORE = ".gitignore"


class Unshaped(enum.Enum):
    """Why a tree has no shape that stands for git's listing."""

    NOT_COMPARABLE = "a .git in it, or something that cannot be read"
    TOO_BIG = f"more than {MAX_ENTRIES} entries"


class _NoShape(Exception):
    """The tree cannot be compared this way (a `.git` in it, too big, unreadable)."""


@dataclass(frozen=True)
class TreeShape:
    entries: frozenset[tuple[str, str]]  # (path from the tree's top, kind: f, l, d or o)
    rules: tuple[tuple[str, bytes | None], ...]  # every ignore file's bytes (a link's target)

    def within(self, earlier: TreeShape) -> bool:
        """Whether git lists now what it listed for `earlier`, less what is gone."""
        return self.rules == earlier.rules and self.entries <= earlier.entries

    def files(self) -> set[str]:
        """The paths git could list: files and links."""
        return {path for path, kind in self.entries if kind in "fl"}


_LETTERS = {"file": "f", "link": "l", "folder": "d", "other": "o"}


def _kind(entry: os.DirEntry[str]) -> str:
    return _LETTERS[entry_kind(entry)]


def _rule_bytes(path: str, kind: str) -> bytes | None:
    """A regular ignore file's bytes, a linked one's target (git reads neither through a link);
    None for anything else. Opened without blocking: a FIFO is never waited on."""
    if kind == "l":
        return os.fsencode(os.readlink(path))
    if kind != "f":
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NoShape(path)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def tree_shape(root: Path, outside_rules: Iterable[Path]) -> TreeShape | Unshaped:
    """The shape of the tree at `root` and the ignore files outside it (`outside_rules`), or why
    it cannot stand for git's listing: a `.git` anywhere in it (another repository, or a name
    git never lists), a folder or rule that cannot be read, more than MAX_ENTRIES entries."""
    entries: set[tuple[str, str]] = set()
    rules: list[tuple[str, bytes | None]] = []
    pending = [("", str(root))]
    try:
        while pending:
            relative, folder = pending.pop()
            with os.scandir(folder) as listing:
                for entry in listing:
                    if entry.name == ".git":
                        return Unshaped.NOT_COMPARABLE
                    path = relative + entry.name
                    kind = _kind(entry)
                    entries.add((path, kind))
                    if len(entries) > MAX_ENTRIES:
                        return Unshaped.TOO_BIG
                    if entry.name == _IGNORE:
                        rules.append((path, _rule_bytes(entry.path, kind)))
                    if kind == "d":
                        pending.append((path + "/", entry.path))
        for rule in outside_rules:
            try:
                rules.append((str(rule), rule.read_bytes()))
            except FileNotFoundError:
                rules.append((str(rule), None))
    except (OSError, _NoShape):
        return Unshaped.NOT_COMPARABLE
    return TreeShape(frozenset(entries), tuple(sorted(rules)))


@dataclass
class KeptListing:
    """git's last listing of a work tree, kept with the tree's shape then (TreeGit's); and the
    run's ignore checker, which answers for the paths a shape adds (util/ignore_check.py)."""

    kept: tuple[TreeShape, frozenset[str]] | None = None
    too_big: bool = False  # a tree too big to compare by shape: git lists it every time
    checker: IgnoreChecker | None = None
    _checker_rules: tuple[tuple[str, bytes | None], ...] | None = None  # what it started under

    def _shape(self, root: Path, rules: list[Path]) -> TreeShape | Unshaped:
        if self.too_big:
            return Unshaped.TOO_BIG
        shape = tree_shape(root, rules)
        self.too_big = shape is Unshaped.TOO_BIG
        return shape

    def listing(
        self,
        root: Path,
        rules: list[Path],
        prefix: str,
        ls_files: Callable[[], tuple[set[str], set[str]]],
    ) -> tuple[set[str], set[str]]:
        """`ls_files()`'s answer (git's listing: paths under `prefix`, nested repositories); or,
        when the shape of `root` and its ignore `rules` show git's answer cannot have changed
        since the one kept, that one less what is gone, without asking; or, when only paths
        were added (the same rules, no `.git`), that one with the new paths the checker does
        not ignore."""
        before = self._shape(root, rules)
        kept = self.kept
        if isinstance(before, TreeShape) and kept is not None and before.within(kept[0]):
            files = before.files()
            return {p for p in kept[1] if prefix + p in files}, set()
        if isinstance(before, TreeShape):
            checked = self._checked(root, rules, prefix, before)
            if checked is not None:
                self.kept = (before, frozenset(checked))
                return set(checked), set()
        self.kept = None
        paths, nested = ls_files()
        if isinstance(before, TreeShape) and not nested and self._shape(root, rules) == before:
            self.kept = (before, frozenset(paths))  # nothing moved while git listed
        return paths, nested

    def _checked(
        self, root: Path, rules: list[Path], prefix: str, now: TreeShape
    ) -> set[str] | None:
        """git's listing of the tree of shape `now`: the kept one's paths whose (path, kind)
        is still there, and the new files under `prefix` the checker does not ignore; None
        when the checker cannot say or the tree moved while it answered."""
        if self.checker is None:
            return None
        if self._checker_rules != now.rules:  # it read rules that may have changed since
            self.checker.close()
            self._checker_rules = now.rules
        kept = self.kept if self.kept is not None and self.kept[0].rules == now.rules else None
        earlier = kept[0].entries if kept is not None else frozenset()
        still = {path for path, kind in now.entries & earlier if kind in "fl"}
        added = sorted(
            path for path, kind in now.entries - earlier if kind in "fl" and path.startswith(prefix)
        )
        if len(added) > MAX_ASKED:
            return None
        try:
            ignored = self.checker.ignored(added)
        except (GitFailed, GitTimedOut):
            self._checker_rules = None
            return None
        if self._shape(root, rules) != now:
            return None  # something moved while git answered: git lists it all
        listed = {p for p in kept[1] if prefix + p in still} if kept is not None else set()
        return listed | {p[len(prefix) :] for p in added if p not in ignored}

    def close(self) -> None:
        """End the checker's process, if one runs."""
        if self.checker is not None:
            self.checker.close()
        self._checker_rules = None
