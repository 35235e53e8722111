"""git through its command line, for the checkout and worktree commands a run makes.

One subprocess per command, no library in between: a run's few git reads (base commit, status,
diff, commit) cost a fork each and nothing at import (docs/decisions/0018-git-command-line.md).
Output is decoded as UTF-8 with surrogate escapes (paths need not be UTF-8) and loses one
trailing newline, as git's porcelain would be read by a shell."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import UsageError

GIT_TIMEOUT_S = 120.0  # a hung git (a stale lock, a slow filesystem) ends the command, not the run


@dataclass(frozen=True)
class GitResult:
    status: int
    out: str
    err: str


def _text(data: bytes) -> str:
    text = data.decode("utf-8", "surrogateescape")
    return text[:-1] if text.endswith("\n") else text


def _command_name(args: tuple[str, ...]) -> str:
    """The subcommand, past git's own options (`-c k=v --no-optional-locks status` -> status)."""
    words = iter(args)
    for word in words:
        if word in ("-c", "-C"):
            next(words, None)  # the option's value
        elif not word.startswith("-"):
            return word
    return ""


def run_git(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
) -> GitResult:
    """`git ARGS` in `cwd`; its status and output, whatever the status. A git that cannot start
    or does not finish in `timeout` (its process group is killed then) is a UsageError naming
    the command."""
    if not cwd.is_dir():
        raise UsageError(f"{cwd} is not a folder")
    try:
        proc = subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a hook it starts dies with it; Ctrl-C does not cut it short
        )
    except FileNotFoundError as exc:
        raise UsageError("git is not installed or not on PATH") from exc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise UsageError(
            f"{cwd}: git {_command_name(args)} did not finish in {timeout:g} s"
        ) from exc
    return GitResult(proc.returncode, _text(out), _text(err).strip())


def git_out(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """`git ARGS` in `cwd`; its output, or a UsageError with git's complaint."""
    done = run_git(cwd, *args, env=env)
    if done.status != 0:
        raise UsageError(f"{cwd}: git {_command_name(args)} failed: {done.err}")
    return done.out
