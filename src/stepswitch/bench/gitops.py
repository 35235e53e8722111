"""The few git commands the bench runs itself, with a fixed identity and nothing of the user's
git configuration: a fresh copy's base commit, the run's change as a patch, a reference applied.

A task run's copy holds no git metadata: its git folder lies beside it, where the contestant's
sandbox cannot see it, and every command names it (docs/decisions/0020-*)."""

from __future__ import annotations

from pathlib import Path

from stepswitch.util.git import run_git
from stepswitch.util.git_objects import EMPTY_TREE
from stepswitch.util.git_tree import TreeGit

BRANCH = "main"
AUTHOR = ("ssw-bench", "ssw-bench@localhost")
IDENTITY = (
    *("-c", f"user.name={AUTHOR[0]}"),
    *("-c", f"user.email={AUTHOR[1]}"),
)


def git(folder: Path, *args: str, check: bool = True) -> str:
    """Run git in `folder` (a repository ssw made itself); its output, or RuntimeError with
    git's first line of complaint."""
    done = run_git(folder, *IDENTITY, *args, env={"HOME": str(folder)})
    if check and done.status != 0:
        why = done.err.splitlines()
        raise RuntimeError(f"git {args[0]}: {why[0] if why else f'exit {done.status}'}")
    return done.out + "\n" if done.out else ""


def commit_base(checkout: Path, git_dir: Path) -> TreeGit:
    """Make `git_dir` (outside `checkout`) a repository whose branch holds everything in
    `checkout` as one commit; the copy's TreeGit at that commit."""
    done = run_git(checkout.parent, "init", "-q", "--bare", "-b", BRANCH, str(git_dir))
    if done.status != 0:
        raise RuntimeError(f"git init: {done.err}")
    tree = TreeGit(
        git_dir=git_dir,
        work_tree=checkout,
        state=git_dir / "ssw",
        branch=f"refs/heads/{BRANCH}",
        base_commit=EMPTY_TREE,
    )
    snapshot, _ = tree.write_tree()
    tree.base_commit = tree.commit("bench: the task's start\n", AUTHOR, snapshot, parents=())
    return tree


def change_patch(tree: TreeGit, base: str, commit: str) -> str:
    """The run's change as `git diff` output (binary files included)."""
    return tree.diff("--binary", base=base, against=commit)


def apply_patches(folder: Path, patches: tuple[Path, ...]) -> None:
    for patch in patches:
        git(folder, "apply", "--whitespace=nowarn", str(patch.resolve()))
