"""The few git commands the bench runs itself, with a fixed identity and nothing of the user's
git configuration: a fresh copy's base commit, the run's change as a patch, a reference applied."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 60.0
BRANCH = "main"
IDENTITY = (
    "-c",
    "user.name=ssw-bench",
    "-c",
    "user.email=ssw-bench@localhost",
    "-c",
    "commit.gpgsign=false",
)


def git(folder: Path, *args: str, check: bool = True) -> str:
    """Run git in `folder`; its output, or RuntimeError with git's first line of complaint."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(folder),  # no ~/.gitconfig of the user's
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    done = subprocess.run(
        ["git", *IDENTITY, *args],
        cwd=folder,
        env=env,
        capture_output=True,
        timeout=GIT_TIMEOUT_S,
        check=False,
    )
    if check and done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"git {args[0]}: {why[0] if why else f'exit {done.returncode}'}")
    return done.stdout.decode("utf-8", "surrogateescape")


def commit_base(folder: Path) -> str:
    """Make `folder` a repository with everything in it as one commit; its hash."""
    git(folder, "init", "-q", "-b", BRANCH)
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "--no-verify", "-m", "bench: the task's start")
    return git(folder, "rev-parse", "HEAD").strip()


def change_patch(folder: Path, base: str, commit: str) -> str:
    """The run's change as `git diff` output (binary files included)."""
    return git(folder, "diff", "--binary", "--no-color", base, commit)


def apply_patches(folder: Path, patches: tuple[Path, ...]) -> None:
    for patch in patches:
        git(folder, "apply", "--whitespace=nowarn", str(patch.resolve()))
