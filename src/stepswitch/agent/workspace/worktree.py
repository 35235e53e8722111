"""The run's git worktree: a new branch `ssw/<run-id>`, never the user's checkout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import UsageError

AUTHOR = ("Stepswitch", "ssw@localhost")
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


def _git(path: Path) -> object:
    import git  # gitpython; imported here so `ssw --help` stays fast

    try:
        return git.Repo(path, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise UsageError(
            f"{path} is not the top of a git repository; run `git init` there"
        ) from exc


def _exclude_ssw_folder(repo: Path) -> None:
    # Keep .ssw/ (worktrees, run records) out of `git status`; no tracked file changes.
    exclude = repo / ".git" / "info" / "exclude"
    if not (repo / ".git").is_dir():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if ".ssw/" not in text.split():
        exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + ".ssw/\n")


def create_worktree(repo: Path, run_id: str) -> Worktree:
    import git

    handle = _git(repo)
    assert isinstance(handle, git.Repo)
    try:
        base = handle.head.commit.hexsha
    except ValueError as exc:
        raise UsageError(f"{repo} has no commits yet; commit something first") from exc
    _exclude_ssw_folder(repo)
    path = repo / ".ssw" / "worktrees" / run_id
    branch = f"ssw/{run_id}"
    handle.git.worktree("add", "-b", branch, str(path), base)
    return Worktree(repo=repo, path=path, branch=branch, base_commit=base)


def changed_paths(worktree: Worktree) -> list[str]:
    """Files that differ from the base commit, untracked ones included (relative posix paths)."""
    import git

    handle = git.Repo(worktree.path)
    out = handle.git.status(
        "--porcelain", "--untracked-files=all", "-z", "--", ".", *TOOL_LEFTOVERS
    )
    paths = []
    for entry in out.split("\0"):
        if len(entry) > 3:
            paths.append(entry[3:])
    return sorted(set(paths))


def diff_text(worktree: Worktree, limit: int = 40_000) -> str:
    import git

    handle = git.Repo(worktree.path)
    handle.git.add("-A", "--intent-to-add", "--", ".", *TOOL_LEFTOVERS)
    text: str = handle.git.diff(worktree.base_commit)
    return text if len(text) <= limit else text[:limit] + "\n[diff cut]"


def commit_all(worktree: Worktree, message: str) -> str:
    import git

    handle = git.Repo(worktree.path)
    handle.git.add("-A", "--", ".", *TOOL_LEFTOVERS)
    name, email = AUTHOR
    handle.git.commit(
        "-m",
        message,
        "--no-verify",
        "--allow-empty",
        env={
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
        },
    )
    return str(handle.head.commit.hexsha)


def remove_worktree(worktree: Worktree) -> None:
    """Drop the working folder; the branch and its commit stay in the user's repository."""
    import git

    git.Repo(worktree.repo).git.worktree("remove", "--force", str(worktree.path))


def describe_checkout(path: Path) -> tuple[str, str]:
    """(base commit, branch) of a checkout made by the caller; a UsageError when it has none."""
    import git

    handle = _git(path)
    assert isinstance(handle, git.Repo)
    try:
        base = handle.head.commit.hexsha
    except ValueError as exc:
        raise UsageError(f"{path} has no commits yet; commit something first") from exc
    branch = "(detached)" if handle.head.is_detached else handle.active_branch.name
    return base, branch


def diff_stats(path: Path, base_commit: str) -> list[tuple[str, int | None, int | None]]:
    """(path, lines added, lines deleted) of each file the committed change touched; a rename
    is listed under both its old and its new path. None counts for binary files."""
    import git

    out: str = git.Repo(path).git.diff("--numstat", "-z", "--no-renames", base_commit, "HEAD")
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
