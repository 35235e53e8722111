"""Git repositories for the tests: written from a dict of files, or copied from a sample in
tests/fixtures/repos, and `git` run in them with no user or system configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

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


@contextmanager
def edited(root: Path, path: str, old: str, new: str) -> Iterator[None]:
    """`old` replaced by `new` in root/path while the block runs, the file as it was afterwards
    (a test's change to a repository that later tests share, as a built workspace)."""
    text = edit(root, path, old, new)
    try:
        yield
    finally:
        (root / path).write_text(text, encoding="utf-8")


def edit(root: Path, path: str, old: str, new: str) -> str:
    """`old` replaced by `new` in root/path (which must hold it); the text as it was."""
    target = root / path
    text = target.read_text(encoding="utf-8")
    assert old in text, f"{path} does not hold {old!r}"
    target.write_text(text.replace(old, new), encoding="utf-8")
    return text


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


# The npm packages the Node gate tests run (tests/fixtures/node_tools/package.json): .ci/run
# installs them with `npm ci` into the folder this variable names.
NODE_TOOLS = "SSW_NODE_TOOLS"


def with_node_modules(root: Path) -> Path:
    """root/node_modules: the one installed in $SSW_NODE_TOOLS, linked file by file (a copy
    where links cannot be made), as a user's `npm install` leaves it; the calling test skips,
    saying why, when there is none."""
    folder = os.environ.get(NODE_TOOLS, "")
    installed = Path(folder) / "node_modules" if folder else None
    if installed is None or not (installed / ".bin").is_dir():
        pytest.skip(
            f"{NODE_TOOLS} names no folder with node_modules (.ci/run installs "
            "tests/fixtures/node_tools there with `npm ci`)"
        )

    def link(source: str, target: str) -> None:
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)

    shutil.copytree(installed, root / "node_modules", symlinks=True, copy_function=link)
    return root / "node_modules"


def logging_git(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a git on PATH (in `folder`/bin) that appends each call's arguments to
    `folder`/git-calls.log, then runs the real git; the log's path."""
    log = folder / "git-calls.log"
    bin_folder = folder / "bin"
    bin_folder.mkdir()
    shim = bin_folder / "git"
    shim.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{shutil.which("git")}" "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    log.touch()
    return log


def logged_commands(log: Path) -> Counter[str]:
    """How many times each git command was run, from `logging_git`'s log."""
    words = (line.split() for line in log.read_text(encoding="utf-8").splitlines())
    return Counter(next(w for w in ws if not w.startswith("-") and "=" not in w) for ws in words)
