"""Protected paths against the base commit, read from the files themselves.

Every file of the base commit under a protected pattern is compared with the worktree by what it
is, its mode and its content (git's blob id of the bytes), so an edit, a deletion, a rename either
way (`git mv`), a mode change, a file swapped for a symbolic link or reached through one all show,
whatever git's index says. New files under a protected pattern come from git's list of index
entries and untracked files; a new symbolic link anywhere that leads outside the worktree or into
a protected path is a problem too. Files git ignores, and the leftovers of the project's tools
(__pycache__, .pyc, .pytest_cache, .mypy_cache, .ruff_cache), are not checked: they are never
part of the change.

Each problem is one line naming the path, what happened, and why the path is protected.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path, PurePosixPath

from stepswitch.gates.base import LINK_MODE, SUBMODULE_MODE, BaseTree, Entry, blob_id
from stepswitch.gates.changes import leftover
from stepswitch.gates.protected import matches_protected

Patterns = Mapping[str, str]  # glob -> why it is protected, e.g. "the golden file of gate e"


def _same_content(path: Path, entry: Entry) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return blob_id(data, entry.oid) == entry.oid


def _through_link(root: Path, rel: str) -> str | None:
    """The first folder on the way to `rel` that is a symbolic link now, if any."""
    parts = PurePosixPath(rel).parts[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth])
        if (root / folder).is_symlink():
            return folder
    return None


def _why(rel: str, patterns: Patterns) -> str | None:
    pattern = matches_protected(rel, patterns)
    return None if pattern is None else patterns[pattern]


class TreeView:
    """The worktree at `root` next to commit `commit`, for one check. Raises BaseUnreadable
    when git cannot list either."""

    def __init__(self, root: Path, base: BaseTree, commit: str) -> None:
        self.root = root
        self.base = base
        self.entries = base.entries(commit)
        self.listed, self.nested = base.worktree_paths()

    @cached_property
    def added(self) -> list[str]:
        """Files git sees that are not in the commit (tool leftovers aside)."""
        return sorted(p for p in self.listed if p not in self.entries and not leftover(p))

    @cached_property
    def _by_id(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for path, entry in self.entries.items():
            out.setdefault(entry.oid, []).append(path)
        return out

    def _link_target(self, entry: Entry) -> str:
        return self.base.blob(entry.oid).decode("utf-8", "surrogateescape")

    def what_changed(self, rel: str, entry: Entry) -> str | None:
        """What happened to the commit's file `rel` in the worktree (None: nothing)."""
        if entry.mode == SUBMODULE_MODE:
            return None
        folder = _through_link(self.root, rel)
        if folder is not None:
            target = os.readlink(self.root / folder)
            return f"reached through the symbolic link {folder} (to {target})"
        full = self.root / rel
        try:
            info = full.lstat()
        except (FileNotFoundError, NotADirectoryError):
            return self._gone(entry)
        was_link = entry.mode == LINK_MODE
        if stat.S_ISLNK(info.st_mode):
            target = os.readlink(full)
            if not was_link:
                return f"replaced by a symbolic link to {target}"
            old = self._link_target(entry)
            return None if target == old else f"symbolic link changed: {old} -> {target}"
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "a file"
        if was_link:
            return f"a symbolic link replaced by {kind}"
        if not stat.S_ISREG(info.st_mode):
            return "replaced by " + (kind if kind == "a folder" else "a special file")
        same = _same_content(full, entry)
        found = [] if same else ["modified"]
        mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
        if mode != entry.mode:
            found.append(f"mode changed {entry.mode} -> {mode}")
        return "; ".join(found) or None

    def _gone(self, entry: Entry) -> str:
        for new in self.added:
            full = self.root / new
            if not full.is_symlink() and full.is_file() and _same_content(full, entry):
                return f"renamed to {new}"
        return "deleted"

    def origin(self, rel: str) -> str:
        """How a file that is not in the commit came: added, or renamed or copied from one."""
        full = self.root / rel
        if full.is_symlink():
            return f"added as a symbolic link to {os.readlink(full)}"
        try:
            data = full.read_bytes()
        except OSError:
            return "added"
        like = next(iter(self.entries.values())).oid if self.entries else ""
        for old in self._by_id.get(blob_id(data, like), []):
            if not os.path.lexists(self.root / old):
                return f"added (renamed from {old})"
            return f"added (a copy of {old})"
        return "added"

    def protected_changes(self, patterns: Patterns) -> list[str]:
        """One line per path under `patterns` that differs from the commit, sorted by path."""
        if not patterns:
            return []
        found: list[tuple[str, str]] = []
        for rel, entry in self.entries.items():
            why = _why(rel, patterns)
            what = self.what_changed(rel, entry) if why is not None else None
            if what is not None:
                found.append((rel, f"{rel}: {what}, but it is {why}"))
        for rel in self.added:
            why = _why(rel, patterns)
            if why is not None and os.path.lexists(self.root / rel):
                found.append((rel, f"{rel}: {self.origin(rel)}, but it is {why}"))
        for rel in self.nested:
            why = _why(rel, patterns)
            if why is not None:
                what = "added (a folder holding another git repository)"
                found.append((rel, f"{rel}: {what}, but it is {why}"))
        return [line for _, line in sorted(found)]

    def new_links(self, patterns: Patterns) -> list[str]:
        """One line per symbolic link that is new since the commit (or points elsewhere now)
        and leads outside the worktree or into a path under `patterns`."""
        real_root = Path(os.path.realpath(self.root))
        found: list[str] = []
        for rel in sorted(self.listed):
            full = self.root / rel
            if not full.is_symlink():
                continue
            target = os.readlink(full)
            entry = self.entries.get(rel)
            if entry is not None and entry.mode == LINK_MODE and self._link_target(entry) == target:
                continue
            real = Path(os.path.realpath(full))
            if not real.is_relative_to(real_root):
                found.append(f"{rel}: a new symbolic link to {target}, outside the worktree")
                continue
            inside = real.relative_to(real_root).as_posix()
            why = self._protected_at(inside, real.is_dir(), patterns)
            if why is not None:
                found.append(f"{rel}: a new symbolic link to {target}, into {inside}, {why}")
        return found

    def _protected_at(self, inside: str, folder: bool, patterns: Patterns) -> str | None:
        """Why `inside` (the real path a link leads to) is protected, or holds what is."""
        why = _why(inside, patterns) if inside != "." else None
        if why is not None:
            return f"which is {why}"
        if folder:
            below = "" if inside == "." else inside + "/"
            for rel in sorted(self.entries):
                if rel.startswith(below) and (why := _why(rel, patterns)) is not None:
                    return f"which holds {rel}, {why}"
        return None
