"""A long-lived git process spoken to through its pipes (util/git_batch.py's object reader,
util/ignore_check.py's ignore checker, util/tree_differ.py's differ): started in its own
session, ended by closing its input.

Such a git only reads: a dying ssw loses nothing by it, and it ends by itself when its input
closes, which the kernel does when ssw's process ends however it ends.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from stepswitch.errors import GitFailed, GitTimedOut, UsageError


def start_git(
    cwd: Path, argv: list[str], env: dict[str, str], errors: IO[bytes] | None = None
) -> subprocess.Popen[bytes]:
    """`argv` (a git command line, util/git.py `git_argv_env`) in `cwd`, its input and output
    piped, its errors written to the file `errors` (none: dropped), never to a pipe that an
    unread complaint could fill."""
    if not cwd.is_dir():
        raise UsageError(f"{cwd} is not a folder")
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors if errors is not None else subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C at the terminal does not end it under a run
        )
    except FileNotFoundError as exc:
        raise UsageError("git is not installed or not on PATH") from exc


T = TypeVar("T")

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


def _said(errors: IO[bytes] | None) -> str:
    """`: LINE`, the last line git wrote to its error file; empty when there is none."""
    if errors is None:
        return ""
    with contextlib.suppress(OSError, ValueError):
        errors.seek(max(0, errors.seek(0, os.SEEK_END) - 4096))
        lines = errors.read().decode("utf-8", "replace").strip().splitlines()
        return f": {lines[-1].strip()}" if lines else ""
    return ""


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


def _error_file() -> IO[bytes] | None:
    """A file for a long-lived git's complaints, removed at once (it goes with its handle); None
    when none can be made (an unwritable TMPDIR): git's errors are then dropped, and a failure
    is said without git's own words, as it was before they were kept."""
    try:
        return tempfile.TemporaryFile()
    except OSError:
        return None


class PipedGit:
    """One long-lived git, started on the first question with the command line and environment
    `command()` gives, run in `cwd`; started again after it ended or the process forked (a
    child asks a git of its own, never its parent's). Callers hold `lock` while they ask."""

    def __init__(
        self, cwd: Path, command: Callable[[], tuple[list[str], dict[str, str]]], timeout: float
    ) -> None:
        self.cwd = cwd
        self.command = command
        self.timeout = timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._errors: IO[bytes] | None = None  # what the running git wrote to its stderr
        self._pid = os.getpid()
        self.lock = threading.Lock()

    def started(self) -> subprocess.Popen[bytes]:
        if self._pid != os.getpid():
            self._proc, self._errors, self._pid = None, None, os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            argv, env = self.command()
            self._errors = _error_file()
            self._proc = start_git(self.cwd, argv, env, self._errors)
            weakref.finalize(self, end_git, self._proc)
        return self._proc

    def answer(self, ask: Callable[[], T]) -> T:
        """`ask()`, one question and its answer at a time. However the asking ends early (git
        failed or did not answer in time, a Ctrl-C in the middle), git is ended: a half-read
        answer cannot be resumed, and the next question starts another."""
        with self.lock:
            try:
                return ask()
            except BaseException:
                self.close()
                raise

    def read_some(self, proc: subprocess.Popen[bytes], deadline: float, what: str) -> bytes:
        """What `proc` has written so far (at least a byte), waiting until `deadline`
        (monotonic); GitTimedOut past it, GitFailed when it ended, with the last line git wrote
        to its error file (`what` names the command in both)."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise GitTimedOut(f"{what} did not answer in {self.timeout:g} s")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise GitFailed(f"{what} ended before it answered{_said(self._errors)}")
        return chunk

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        """End the process, if one runs; a later question starts another."""
        proc, self._proc = self._proc, None
        end_git(proc)
        errors, self._errors = self._errors, None
        if errors is not None:
            errors.close()
