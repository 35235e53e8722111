"""Tests of the gates: fixture repositories are written into tmp_path by `write_repo`."""

from __future__ import annotations

import fcntl
import os
import subprocess
import textwrap
import threading
from pathlib import Path


def write_repo(root: Path, files: dict[str, str], *, git: bool = False) -> Path:
    """Write `files` (relative path -> text, dedented) under root; commit them when `git`."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    if git:
        run_git(root, "init", "-q")
        run_git(root, "add", "-A")
        run_git(
            root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base"
        )
    return root


def run_git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def lock_freed(path: Path, timeout_s: float) -> bool:
    """Whether the flock on `path` is free within `timeout_s` (a thread blocks in flock)."""
    got = threading.Event()

    def take() -> None:
        with open(path, "a") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            got.set()

    threading.Thread(target=take, daemon=True).start()
    return got.wait(timeout_s)


def scratch_env(home: Path, **more: str) -> dict[str, str]:
    """An environment a test builds from nothing for the gates or a plain pytest: this PATH,
    HOME at `home`, `more`, and the plugins tests/conftest.py leaves out left out."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), **more, **left_out_plugins()}


def left_out_plugins() -> dict[str, str]:
    """PYTEST_ADDOPTS as tests/conftest.py set it (the plugins no fixture repository uses left
    out), for an environment a test builds from nothing: without it each pytest the gates start
    there loads anyio's and xdist's plugins, 0.15 to 1 s of each start."""
    words = os.environ.get("PYTEST_ADDOPTS")
    return {"PYTEST_ADDOPTS": words} if words else {}
