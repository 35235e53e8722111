"""The run's work tree: a new branch `ssw/<run-id>`, never the user's checkout, and a folder
that holds the base commit's files and no git metadata."""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import GitFailed, SswError, UsageError
from stepswitch.util.diff_counts import numstat
from stepswitch.util.git import Checkout, discover, git_out, run_git
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.text import escape_controls

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
    path: Path  # where the agent works: files only, no git metadata
    branch: str
    base_commit: str
    git: TreeGit  # the git folder, branch and scratch folder, named from ssw's own records
    start: str | None = None  # `--continue`: the earlier run's last commit, where the branch began


def check_top(path: Path) -> Checkout:
    """`path` is the top of a git checkout (a linked worktree's too), else a UsageError. `ssw
    run` finds it once, for `check_clean` and `create_worktree` (ADR 0091)."""
    found = discover(path) if path.is_dir() else None
    if found is None or found.top.resolve() != path.resolve():
        raise UsageError(f"{path} is not the top of a git repository; run `git init` there")
    return found


def exclude_ssw_folder(repo: Path, exclude: Path | None = None) -> None:
    """Keep .ssw/ (ledger, worktrees, run records) out of `git status` and `git add -A`, in any
    checkout: git names the exclude file (a linked worktree's is in the common git folder), or
    the caller, from the checkout git found (`Checkout.exclude`). Call it before anything is
    written to .ssw/; no tracked file changes."""
    if exclude is None:
        relative = git_out(repo, "rev-parse", "--git-path", "info/exclude", user_config=True)
        exclude = repo / relative  # absolute for a linked worktree, relative to repo otherwise
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8", errors="replace") if exclude.exists() else ""
    if SSW_FOLDER + "/" not in text.split():
        with exclude.open("a", encoding="utf-8") as out:
            out.write(("\n" if text and not text.endswith("\n") else "") + SSW_FOLDER + "/\n")


def _head_commit(checkout: Checkout) -> str:
    if checkout.head is None:
        raise UsageError(f"{checkout.top} has no commits yet; commit something first")
    return checkout.head


def uncommitted_paths(repo: Path) -> list[str]:
    """What the checkout has that its HEAD commit has not: changed, staged and untracked files
    (not ignored ones, not .ssw/, not the tools' caches). The user's own checkout, read with
    the user's configuration before any run."""
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
        user_config=True,
    )
    entries = iter(out.split("\0"))
    paths = []
    for entry in entries:
        if len(entry) > 3:
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename or copy: its old path comes next
                next(entries, None)
    return paths


def check_clean(
    repo: Path, allow_dirty: bool = False, checkout: Checkout | None = None
) -> list[str]:
    """Refuse a checkout the run would not see whole: no commits, or uncommitted changes (the
    worktree starts from HEAD, so they would be left out) unless `allow_dirty`. Returns the
    uncommitted paths; makes nothing. A checkout ssw cannot write in (a read-only mount) is
    refused too: a run keeps its worktree, records and ledger in .ssw/ and its commits in git.
    `checkout`: `check_top(repo)`'s, when the caller found it already."""
    checkout = checkout or check_top(repo)
    _head_commit(checkout)
    for folder, holds in (
        (checkout.top, SSW_FOLDER + "/"),
        (checkout.common_dir, "the run's branch"),
    ):
        if not os.access(folder, os.W_OK):
            raise UsageError(
                f"{folder} cannot be written (a read-only file system, or no permission): ssw "
                f"keeps {holds} there (fix: run it on a writable clone of the repository)"
            )
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


def state_path(repo: Path, run_id: str) -> Path:
    """ssw's own folder for a run's work tree (scratch indexes): hidden from the sandbox."""
    return repo / SSW_FOLDER / "git" / run_id


def worktree_path(repo: Path, run_id: str) -> Path:
    """Where run `run_id`'s work tree is made in the checkout `repo` (resolved)."""
    return repo / SSW_FOLDER / "worktrees" / run_id


def create_worktree(
    repo: Path,
    run_id: str,
    base: str | None = None,
    start: str | None = None,
    checkout: Checkout | None = None,
) -> Worktree:
    """A new branch `ssw/<run-id>` at the checkout's last commit and a folder holding that
    commit's files and nothing of git's: every later git command names the repository's git
    folder and this folder itself (docs/decisions/0020-git-outside-the-agents-reach.md).
    `base`, `start` (`--continue`): the base commit to hold and judge by, and the commit the
    branch starts at (the earlier run's last), instead of the checkout's last commit.
    `checkout`: `check_top(repo)`'s, when the caller found it already (before any agent ran)."""
    repo = repo.resolve()  # git runs in ssw's scratch folder: every path it gets is absolute
    checkout = checkout or check_top(repo)
    base = base or _head_commit(checkout)
    exclude_ssw_folder(repo, checkout.exclude)
    path = worktree_path(repo, run_id)
    branch = f"ssw/{run_id}"
    lock = lock_path(repo, run_id)
    fd = _hold(lock)  # before the worktree exists: a live run is never taken for a dead one
    tree = TreeGit(
        git_dir=checkout.common_dir,
        work_tree=path,
        state=state_path(repo, run_id),
        branch=f"refs/heads/{branch}",
        base_commit=base,
        excludes_file=checkout.excludes_file,
    )
    try:
        path.mkdir(parents=True)
        tree.reader().started()  # git starts beside the branch's update-ref, not after it
        # The empty old value: the branch must not exist yet.
        tree.git_ok("update-ref", "-m", "ssw: a run's branch", tree.branch, start or base, "")
        tree.set_head(start or base)
        tree.check_out()
    except BaseException:
        tree.close()
        shutil.rmtree(path, ignore_errors=True)
        # The branch too, if it was made: only while it is still at the base commit.
        with contextlib.suppress(SswError, OSError):
            tree.git("update-ref", "-d", tree.branch, start or base)
        shutil.rmtree(tree.state, ignore_errors=True)
        lock.unlink(missing_ok=True)
        os.close(fd)
        raise
    _HELD[path] = fd
    return Worktree(repo=repo, path=path, branch=branch, base_commit=base, git=tree, start=start)


def open_worktree(repo: Path, run_id: str) -> Worktree | None:
    """A run's work tree as a later command finds it (`ssw runs clean`), at its branch's last
    commit: the git folder from the repository, never from anything in the work tree; None when
    the branch is gone."""
    repo = repo.resolve()
    checkout = check_top(repo)
    branch = f"ssw/{run_id}"
    head = run_git(
        checkout.top, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}",
        git_dir=checkout.common_dir,
    )  # fmt: skip
    if head.status != 0 or not head.out.strip():
        return None
    path = repo / SSW_FOLDER / "worktrees" / run_id
    tree = TreeGit(
        git_dir=checkout.common_dir,
        work_tree=path,
        state=state_path(repo, run_id),
        branch=f"refs/heads/{branch}",
        base_commit=head.out.strip(),
        excludes_file=checkout.excludes_file,
    )
    return Worktree(repo=repo, path=path, branch=branch, base_commit=tree.base_commit, git=tree)


def changed_paths(worktree: Worktree) -> list[str]:
    """Files that differ from the base commit, new ones included (relative posix paths)."""
    return worktree.git.changed_paths()


def diff_text(worktree: Worktree, limit: int = 40_000) -> str:
    text = worktree.git.diff()
    return text if len(text) <= limit else text[:limit] + "\n[diff cut]"


def commit_all(worktree: Worktree, message: str) -> str | None:
    """Commit everything the work tree holds on the run's branch; the commit's id, or None when
    it holds exactly what the branch's last commit has (no empty commit claims anything).
    Control characters in the message are escaped, and paths git cannot hold are named in it."""
    git = worktree.git
    tree, left_out = git.write_tree()
    head, head_tree = git.head_and_tree()
    if not left_out and tree == head_tree:
        return None
    # What was left out is said in the commit itself, where whoever takes the change sees it.
    text = commit_message(message, left_out)
    try:
        return git.commit(text, AUTHOR, tree, (head,))
    except GitFailed:
        # The branch as ssw remembered it moved (someone else committed on it): on top of
        # where it is now, as a run that read the branch first would have.
        now, now_tree = git.head_and_tree(fresh=True)
        if now == head:
            raise
        return None if not left_out and tree == now_tree else git.commit(text, AUTHOR, tree, (now,))


def commit_message(message: str, left_out: list[str]) -> str:
    lines = [escape_controls(message).rstrip()]
    if left_out:
        lines.append("\nleft out of this commit: " + "; ".join(left_out))
    return "\n".join(lines) + "\n"


def remove_worktree(worktree: Worktree) -> None:
    """Drop the working folder and ssw's scratch folder for it; the branch and its commit stay
    in the user's repository. Callers that end a run use `leave_worktree`, which checks first."""
    worktree.git.close()
    try:
        shutil.rmtree(worktree.path, ignore_errors=True)  # never follows a link out
        shutil.rmtree(worktree.git.state, ignore_errors=True)
    finally:
        _release(worktree)


def _release(worktree: Worktree) -> None:
    worktree.git.close()
    fd = _HELD.pop(worktree.path, None)
    if fd is not None:
        lock_path(worktree.repo, worktree.path.name).unlink(missing_ok=True)
        os.close(fd)


def unsaved_paths(worktree: Worktree) -> list[str]:
    """What the work tree holds that its branch's last commit has not: added, changed and
    deleted files (the tools' caches aside)."""
    return worktree.git.changed_paths(base=worktree.git.head())


def leave_worktree(worktree: Worktree) -> list[str]:
    """The end of a run's work tree: removed when its branch holds everything it has, else
    kept (its lock released); what is on no commit, empty when it was removed. A tree that
    cannot be compared (git failing, a full disk) is kept."""
    try:
        unsaved = unsaved_paths(worktree)
    except (SswError, OSError) as exc:
        unsaved = [f"(it cannot be compared with its branch: {exc})"]
    if unsaved:
        _release(worktree)
        return unsaved
    remove_worktree(worktree)
    return []


def discard_worktree(worktree: Worktree) -> str | None:
    """A run that never began (refused or stopped while it was set up): its work tree and its
    branch go when neither holds anything the base commit has not; None then, else what stays
    and why. A continued run's branch goes while it is where it began: the earlier run's branch
    holds all of that."""
    if worktree.start is not None and not worktree.git.changed_paths():
        remove_worktree(worktree)  # still the base commit's files: the earlier work not yet in
    unsaved = [] if not worktree.path.exists() else leave_worktree(worktree)
    if unsaved:
        held = some_paths(unsaved)
        return f"its worktree {worktree.path} holds what the base commit has not ({held})"
    tree = worktree.git
    try:
        head = tree.head()
        if head == worktree.start:
            tree.git_ok("update-ref", "-d", tree.branch, head)
            return None
        trees = tree.git_ok("rev-parse", f"{head}^{{tree}}", f"{tree.base_commit}^{{tree}}")
        if len(set(trees.split())) != 1:
            return f"its branch {worktree.branch} holds a change (commit {head[:12]})"
        tree.git_ok("update-ref", "-d", tree.branch, head)  # only from where ssw left it
    except (SswError, OSError) as exc:
        return f"its branch {worktree.branch} could not be deleted: {exc}"
    return None


def diff_stats(tree: TreeGit, commit: str) -> list[tuple[str, int | None, int | None]]:
    """(path, lines added, lines deleted) of each file the committed change touched; a rename
    is listed under both its old and its new path. None counts for binary files. Counted
    from the review's diff of the same tree when it is kept (util/diff_counts.py), else git's."""
    reviewed = tree.kept_diff(commit)
    counted = numstat(reviewed) if reviewed is not None else None
    if counted is not None:
        return counted
    out = tree.diff("--numstat", "-z", "--no-renames", against=commit)
    stats: list[tuple[str, int | None, int | None]] = []
    for entry in out.split("\0"):
        parts = entry.split("\t", 2)  # a name may hold a tab
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
