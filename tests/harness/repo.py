"""Git repositories for the tests: written from a dict of files, or copied from a sample in
tests/fixtures/repos, and `git` run in them with no user or system configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

REPOS = Path(__file__).resolve().parents[1] / "fixtures" / "repos"

# No user or system configuration (no signing, hooks or templates of the machine's), and an
# identity for the commits.
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "user",
    "GIT_AUTHOR_EMAIL": "user@localhost",
    "GIT_COMMITTER_NAME": "user",
    "GIT_COMMITTER_EMAIL": "user@localhost",
}


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`git ARGS` in `root`, with `env` added (a commit's dates); its output (a failure raises
    CalledProcessError)."""
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def commit_all(root: Path, message: str = "change") -> str:
    """Everything in `root` committed (an empty commit when nothing changed); its hash."""
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, "--allow-empty")
    return git(root, "rev-parse", "HEAD").strip()


def write_repo(root: Path, files: dict[str, str], *, commit: bool = False) -> Path:
    """Write `files` (relative path -> text, dedented) under root; with `commit`, a new git
    repository with them in its first commit."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    if commit:
        git(root, "init", "-q")
        commit_all(root, "base")
    return root


def sample_repo(target: Path, sample: str) -> Path:
    """A copy of tests/fixtures/repos/<sample>, committed on `main` as the user's checkout."""
    shutil.copytree(REPOS / sample, target, ignore=shutil.ignore_patterns("__pycache__"))
    git(target, "init", "-q", "-b", "main")
    commit_all(target, f"{sample}: the user's code")
    return target
