"""The files a change touched, as git sees them against the base commit: both sides of a rename,
deletions, and new untracked files. The gates use it to complete the list they are given (the
importers of a renamed or deleted module must be selected too)."""

from __future__ import annotations

from collections.abc import Iterable

from stepswitch.errors import UsageError
from stepswitch.util.git_objects import leftover
from stepswitch.util.git_tree import TreeGit

__all__ = ["changed_since", "complete_changes", "leftover", "parse_name_status"]


def parse_name_status(text: str) -> list[str]:
    """Paths from `git diff --name-status -z`: renames and copies give both old and new."""
    fields = text.split("\0")
    out: list[str] = []
    i = 0
    while i < len(fields):
        status = fields[i]
        if not status:
            i += 1
            continue
        if status[0] in "RC":
            out += [fields[i + 1], fields[i + 2]] if i + 2 < len(fields) else []
            i += 3
        else:
            out += [fields[i + 1]] if i + 1 < len(fields) else []
            i += 2
    return out


def changed_since(tree: TreeGit | None, base: str) -> list[str] | None:
    """Every path (relative posix, sorted) that differs between `base` and what the work tree
    holds, deletions and new files too (a rename is both); None when git cannot say (not a
    repository, unknown base)."""
    if tree is None:
        return None
    try:
        return tree.changed_paths(base)
    except UsageError:
        return None


def complete_changes(tree: TreeGit | None, given: Iterable[str], base: str) -> list[str]:
    """The given paths that exist or that git reports, plus everything git reports against
    `base`. A path that neither exists nor differs (a mangled rename) is dropped."""
    from_git = changed_since(tree, base)
    given = list(given)
    if from_git is None or tree is None:
        return given
    known = set(from_git)
    root = tree.work_tree / tree.prefix
    kept = [p for p in given if p in known or (root / p).exists()]
    return sorted({*kept, *from_git})
