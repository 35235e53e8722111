"""The run's git worktree: a new branch `ssw/<run-id>`, never the user's checkout."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.util.git import git_out, run_git

AUTHOR = ("Stepswitch", "ssw@localhost")
SSW_FOLDER = ".ssw"  # in the user's checkout: ledger, worktrees/, runs/
# What the project's tools leave behind is not part of the change, ignored by the repo or not.
TOOL_LEFTOVERS = (
    ":(exclude,glob)**/__pycache__/**",
    ":(exclude,glob)**/*.pyc",
    ":(exclude,glob)**/.pytest_cache/**",
    ":(exclude,glob)**/.mypy_cache/**",
    ":(exclude,glob)**/.ruff_cache/**",
)


@dataclass(frozen=True)
class Worktree:
    repo: Path  # the user's checkout
    path: Path  # where the agent works
    branch: str
    base_commit: str


def _check_top(path: Path) -> None:
    """`path` is the top of a git checkout (a linked worktree's too), else a UsageError."""
    top = run_git(path, "rev-parse", "--show-toplevel") if path.is_dir() else None
    if top is None or top.status != 0 or Path(top.out).resolve() != path.resolve():
        raise UsageError(f"{path} is not the top of a git repository; run `git init` there")


def exclude_ssw_folder(repo: Path) -> None:
    """Keep .ssw/ (ledger, worktrees, run records) out of `git status` and `git add -A`, in any
    checkout: git names the exclude file (a linked worktree's is in the common git folder).
    Call it before anything is written to .ssw/; no tracked file changes."""
    relative = git_out(repo, "rev-parse", "--git-path", "info/exclude")
    exclude = repo / relative  # absolute for a linked worktree, relative to repo otherwise
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8", errors="replace") if exclude.exists() else ""
    if SSW_FOLDER + "/" not in text.split():
        with exclude.open("a", encoding="utf-8") as out:
            out.write(("\n" if text and not text.endswith("\n") else "") + SSW_FOLDER + "/\n")


def _head_commit(repo: Path) -> str:
    done = run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if done.status != 0:
        raise UsageError(f"{repo} has no commits yet; commit something first")
    return done.out.strip()


def uncommitted_paths(repo: Path) -> list[str]:
    """What the checkout has that its HEAD commit has not: changed, staged and untracked files
    (not ignored ones, not .ssw/, not the tools' caches)."""
    out = git_out(
        repo,
        "--no-optional-locks",  # a look, not a change: git must not rewrite the index for it
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=normal",
        "--",
        ".",
        f":(exclude){SSW_FOLDER}",
        *TOOL_LEFTOVERS,
    )
    entries = iter(out.split("\0"))
    paths = []
    for entry in entries:
        if len(entry) > 3:
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename or copy: its old path comes next
                next(entries, None)
    return paths


def check_clean(repo: Path, allow_dirty: bool = False) -> list[str]:
    """Refuse a checkout the run would not see whole: no commits, or uncommitted changes (the
    worktree starts from HEAD, so they would be left out) unless `allow_dirty`. Returns the
    uncommitted paths; makes nothing."""
    _check_top(repo)
    _head_commit(repo)
    dirty = uncommitted_paths(repo)
    if dirty and not allow_dirty:
        raise UsageError(
            f"{repo} has uncommitted changes ({some_paths(dirty)}): they would be left out of "
            "the run (commit or stash them, or pass --allow-dirty)"
        )
    return dirty


def dirty_notice(repo: Path, dirty: list[str]) -> str:
    """The line a run with --allow-dirty starts with."""
    return (
        f"--allow-dirty: the run starts from {repo}'s last commit; its uncommitted changes "
        f"({some_paths(dirty)}) are left out of the run"
    )


def some_paths(paths: list[str], shown: int = 3) -> str:
    """ "2 files: a.py, b.py", the first few named."""
    more = f", and {len(paths) - shown} more" if len(paths) > shown else ""
    noun = "file" if len(paths) == 1 else "files"
    return f"{len(paths)} {noun}: {', '.join(paths[:shown])}{more}"


# --- the run's lock: held while its process lives, so a worktree left by a killed run is known ---

_HELD: dict[Path, int] = {}  # worktree path -> the open lock file's descriptor


def lock_path(repo: Path, run_id: str) -> Path:
    return repo / SSW_FOLDER / "worktrees" / f"{run_id}.lock"


def _hold(lock: Path) -> int:
    import fcntl

    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by the run's commands
    fcntl.flock(fd, fcntl.LOCK_EX)  # a fresh run id: nobody else holds it
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def create_worktree(repo: Path, run_id: str) -> Worktree:
    _check_top(repo)
    base = _head_commit(repo)
    exclude_ssw_folder(repo)
    path = repo / SSW_FOLDER / "worktrees" / run_id
    branch = f"ssw/{run_id}"
    lock = lock_path(repo, run_id)
    fd = _hold(lock)  # before the worktree exists: a live run is never taken for a dead one
    try:
        git_out(repo, "worktree", "add", "-b", branch, str(path), base)
    except BaseException:
        lock.unlink(missing_ok=True)
        os.close(fd)
        raise
    _HELD[path] = fd
    return Worktree(repo=repo, path=path, branch=branch, base_commit=base)


def changed_paths(worktree: Worktree) -> list[str]:
    """Files that differ from the base commit, untracked ones included (relative posix paths)."""
    out = git_out(
        worktree.path,
        "status",
        "--porcelain",
        "--untracked-files=all",
        "-z",
        "--",
        ".",
        *TOOL_LEFTOVERS,
    )
    paths = []
    for entry in out.split("\0"):
        if len(entry) > 3:
            paths.append(entry[3:])
    return sorted(set(paths))


def diff_text(worktree: Worktree, limit: int = 40_000) -> str:
    git_out(worktree.path, "add", "-A", "--intent-to-add", "--", ".", *TOOL_LEFTOVERS)
    text = git_out(worktree.path, "diff", worktree.base_commit)
    return text if len(text) <= limit else text[:limit] + "\n[diff cut]"


def commit_all(worktree: Worktree, message: str) -> str:
    git_out(worktree.path, "add", "-A", "--", ".", *TOOL_LEFTOVERS)
    name, email = AUTHOR
    identity = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }
    git_out(
        worktree.path,
        "commit",
        "-q",
        "-m",
        message,
        "--no-verify",
        "--allow-empty",
        env={**os.environ, **identity},
    )
    return _head_commit(worktree.path)


def remove_worktree(worktree: Worktree) -> None:
    """Drop the working folder; the branch and its commit stay in the user's repository."""
    try:
        git_out(worktree.repo, "worktree", "remove", "--force", str(worktree.path))
    finally:
        fd = _HELD.pop(worktree.path, None)
        if fd is not None:
            lock_path(worktree.repo, worktree.path.name).unlink(missing_ok=True)
            os.close(fd)


def describe_checkout(path: Path) -> tuple[str, str]:
    """(base commit, branch) of a checkout made by the caller; a UsageError when it has none."""
    _check_top(path)
    base = _head_commit(path)
    branch = run_git(path, "symbolic-ref", "--short", "--quiet", "HEAD")
    return base, branch.out.strip() if branch.status == 0 else "(detached)"


def diff_stats(path: Path, base_commit: str) -> list[tuple[str, int | None, int | None]]:
    """(path, lines added, lines deleted) of each file the committed change touched; a rename
    is listed under both its old and its new path. None counts for binary files."""
    out = git_out(path, "diff", "--numstat", "-z", "--no-renames", base_commit, "HEAD")
    stats: list[tuple[str, int | None, int | None]] = []
    for entry in out.split("\0"):
        parts = entry.split("\t")
        if len(parts) == 3:
            added, deleted, name = parts
            stats.append(
                (
                    name,
                    int(added) if added != "-" else None,
                    int(deleted) if deleted != "-" else None,
                )
            )
    return stats
