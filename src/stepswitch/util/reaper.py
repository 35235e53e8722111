"""What kills the commands ssw started when ssw itself dies without killing them (kill -9, a
crash, the OOM killer). Under bwrap the sandbox ends with ssw (`--die-with-parent`); with
`--sandbox none`, or for a gate run on the host, nothing else would: a command the agent left
running would go on as the user, with the user's files.

The reaper is a small process of ssw's own (the host interpreter, isolated, no site), in a
session of its own, started with the first process group ssw tracks. ssw writes `+PGID` when
it starts a group and `-PGID` when it has killed it; at the end of its input, which comes when
ssw's process is gone however it ended, the reaper kills every group still listed and exits.
A normal end has killed them all already, so the reaper then kills nothing."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from typing import IO

_SCRIPT = r"""
import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)  # it ends when ssw has: at the end of its input
live = set()
for line in sys.stdin.buffer:
    try:
        pgid = int(line[1:])
    except ValueError:
        continue
    if line[:1] == b"+":
        live.add(pgid)
    else:
        live.discard(pgid)
for pgid in live:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_pipe: IO[bytes] | None = None
_started = False  # one try per process: a reaper that cannot start is not retried per command


def _reaper() -> IO[bytes] | None:
    global _pipe, _started
    if not _started:
        _started = True
        with contextlib.suppress(OSError):
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _SCRIPT],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # no terminal's Ctrl-C, no group signal of ssw's
            )
            _pipe = proc.stdin
    return _pipe


def _say(line: str) -> None:
    global _pipe
    with _lock:
        pipe = _reaper()
        if pipe is None:
            return
        try:
            pipe.write(line.encode() + b"\n")
            pipe.flush()
        except OSError:  # the reaper is gone: nothing to tell any more
            _pipe = None


def started(pgid: int) -> None:
    """A process group ssw started and will kill: the reaper kills it if ssw dies first."""
    _say(f"+{pgid}")


def ended(pgid: int) -> None:
    """A group ssw has killed (or seen end): the reaper forgets it."""
    if _pipe is not None:
        _say(f"-{pgid}")
