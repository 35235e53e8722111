"""The files a change touched, as git sees them against the base commit: both sides of a rename,
deletions, and new untracked files. The gates use it to complete the list they are given (the
importers of a renamed or deleted module must be selected too)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from stepswitch.errors import UsageError
from stepswitch.util.git import run_git

GIT_TIMEOUT_S = 60.0
_LEFTOVER_PARTS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})


def _git(root: Path, env: Mapping[str, str] | None, *args: str) -> str | None:
    """git's output, or None when it fails, cannot start or hangs: the caller then keeps the list
    it was given."""
    try:
        done = run_git(root, *args, env=env, timeout=GIT_TIMEOUT_S)
    except UsageError:
        return None
    return done.out if done.status == 0 else None


def leftover(path: str) -> bool:
    """A file the project's tools leave behind (caches, bytecode): never part of a change."""
    pure = PurePosixPath(path)
    return bool(_LEFTOVER_PARTS & set(pure.parts)) or pure.suffix == ".pyc"


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


def changed_since(root: Path, base: str, env: Mapping[str, str] | None = None) -> list[str] | None:
    """Every path (relative posix, sorted) that differs between `base` and the working tree at
    `root`, old and new names of renames included, deletions and untracked files too; None when
    git cannot say (not a repository, unknown base)."""
    diff = _git(root, env, "diff", "--name-status", "-z", "-M", "--relative", base, "--")
    if diff is None:
        return None
    others = _git(root, env, "ls-files", "--others", "--exclude-standard", "-z") or ""
    paths = parse_name_status(diff) + [p for p in others.split("\0") if p]
    return sorted({p for p in paths if p and not leftover(p)})


def complete_changes(
    root: Path, given: Iterable[str], base: str, env: Mapping[str, str] | None = None
) -> list[str]:
    """The given paths that exist or that git reports, plus everything git reports against
    `base`. A path that neither exists nor differs (a mangled rename) is dropped."""
    from_git = changed_since(root, base, env)
    given = list(given)
    if from_git is None:
        return given
    known = set(from_git)
    kept = [p for p in given if p in known or (root / p).exists()]
    return sorted({*kept, *from_git})
