"""A long-lived git process spoken to through its pipes (util/git_batch.py's object reader,
util/ignore_check.py's ignore checker): started in its own session, ended by closing its input.

Such a git only reads: a dying ssw loses nothing by it, and it ends by itself when its input
closes, which the kernel does when ssw's process ends however it ends.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

from stepswitch.errors import GitFailed, GitTimedOut, UsageError


def start_git(cwd: Path, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`argv` (a git command line, util/git.py `git_argv_env`) in `cwd`, its input and output
    piped, its errors dropped (it answers on its output; nothing unread fills a pipe)."""
    if not cwd.is_dir():
        raise UsageError(f"{cwd} is not a folder")
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C at the terminal does not end it under a run
        )
    except FileNotFoundError as exc:
        raise UsageError("git is not installed or not on PATH") from exc


_PIPE_MIN = 4096  # the smallest a pipe holds (one page)


def send(proc: subprocess.Popen[bytes], request: bytes) -> threading.Thread | None:
    """Write `request` to `proc`'s input, whose earlier questions git has read: at once when it
    fits in the empty pipe (the write cannot block), else on a thread (returned, to be joined)
    while the caller reads the answers, so that neither pipe fills up."""
    if len(request) <= _PIPE_MIN:
        _write(proc, request)
        return None
    writer = threading.Thread(target=_write, args=(proc, request), daemon=True)
    writer.start()
    return writer


def _write(proc: subprocess.Popen[bytes], request: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # a git that died: the reader says so
        proc.stdin.write(request)
        proc.stdin.flush()


def read_some(proc: subprocess.Popen[bytes], deadline: float, what: str, waited: float) -> bytes:
    """What `proc` has written so far (at least a byte), waiting until `deadline` (monotonic,
    `waited` seconds after the request); GitTimedOut past it, GitFailed when it ended (`what`
    names the folder and the command in both)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
        raise GitTimedOut(f"{what} did not answer in {waited:g} s")
    chunk = os.read(fd, 1 << 16)
    if not chunk:
        raise GitFailed(f"{what} ended before it answered")
    return chunk


def end_git(proc: subprocess.Popen[bytes] | None) -> None:
    """End `proc`: its input closed (it exits), killed if it does not at once."""
    if proc is None:
        return
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
