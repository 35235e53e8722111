"""One way to run a command the agent or a gate asked for: its own process group, output read
by a thread with a bounded drain, the whole group killed at the timeout and when the command
exits, and every live group killed when ssw itself is interrupted (`kill_live_groups`), or by
the reaper when ssw is killed (util/reaper.py)."""

from __future__ import annotations

import codecs
import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from stepswitch.util import reaper

DRAIN_S = 2.0  # how long to wait for output still in the pipe once the command has exited

# Process groups started here and not yet killed, each with whether the reaper was told of it.
_live: dict[int, bool] = {}
_live_lock = threading.Lock()


@dataclass(frozen=True)
class ProcResult:
    exit_code: int | None  # None: it never started (start_error says why) or timed out
    output: str  # stdout and stderr merged; head and tail kept when longer than the cap
    duration_s: float
    timed_out: bool = False
    start_error: str | None = None


class HeadTail:
    """Keeps the first and last `cap // 2` characters of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = ""
        self.tail = ""
        self.cut = 0

    def add(self, text: str) -> None:
        if len(self.head) < self.half:
            take = self.half - len(self.head)
            self.head += text[:take]
            text = text[take:]
        self.tail += text
        if len(self.tail) > self.half:
            self.cut += len(self.tail) - self.half
            self.tail = self.tail[-self.half :]

    def text(self) -> str:
        if not self.cut:
            return self.head + self.tail
        note = f"\n[... {self.cut} characters cut from the middle of the output ...]\n"
        return self.head + note + self.tail


def pump(fd: int, sink: HeadTail) -> None:
    """Read `fd` to its end into `sink`, as UTF-8 (bad bytes replaced)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in iter(lambda: os.read(fd, 65536), b""):
        sink.add(decoder.decode(chunk))
    sink.add(decoder.decode(b"", final=True))


def pump_pipe(pipe: BinaryIO, sink: HeadTail) -> None:
    """`pump` for a pipe this thread owns: it alone closes it, so no one closes the fd under a
    read (an interrupted caller let go of it: EBADF, or another file's reused fd)."""
    try:
        pump(pipe.fileno(), sink)
    except OSError:  # the read end went away all the same: the output so far is kept
        pass
    finally:
        pipe.close()


def track_group(pgid: int, reaped: bool = True) -> None:
    """Count a process group started elsewhere among the live ones (`kill_live_groups`); with
    `reaped`, the reaper kills it if ssw dies without doing so (util/reaper.py). A group whose
    sandbox ends with ssw (`Confinement.ends_with_ssw`) needs no reaper."""
    with _live_lock:
        _live[pgid] = reaped
    if reaped:
        reaper.started(pgid)


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is already gone
        os.killpg(pgid, signal.SIGKILL)
    with _live_lock:
        was_reaped = _live.pop(pgid, False)
    if was_reaped:
        reaper.ended(pgid)


def kill_live_groups() -> int:
    """Kill every process group still running; how many there were. For interruption paths."""
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        kill_group(pgid)
    return len(groups)


def run_in_group(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    output_cap: int,
    stop: threading.Event | None = None,
    reaped: bool = True,
) -> ProcResult:
    """Run argv to its end, its timeout, or `stop` being set (then it is killed and counts as
    timed out); never raises for the command's own failures. `reaped`: as `track_group`."""
    began = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so the whole tree can be killed
        )
    except OSError as exc:
        return ProcResult(None, "", 0.0, start_error=f"cannot start {argv[0]}: {exc.strerror}")
    track_group(proc.pid, reaped)
    assert proc.stdout is not None
    sink = HeadTail(output_cap)
    reader = threading.Thread(target=pump_pipe, args=(proc.stdout, sink), daemon=True)
    reader.start()
    # Popen.wait(timeout) polls with sleeps of up to 50 ms, so every command would be noticed
    # late; a thread blocked in waitpid and an Event wait with a timeout notice the exit at once.
    exited = threading.Event()

    def wait_for_exit() -> None:
        proc.wait()
        exited.set()

    threading.Thread(target=wait_for_exit, daemon=True).start()
    if stop is not None:  # the caller may end it early: `stop` ends the wait as an exit would

        def wait_for_stop() -> None:
            stop.wait()
            exited.set()

        threading.Thread(target=wait_for_stop, daemon=True).start()
    try:
        timed_out = not exited.wait(timeout=max(0.0, timeout_s))
    finally:
        # Also once the command exits: background children would otherwise outlive the call.
        kill_group(proc.pid)
    proc.wait()
    reader.join(timeout=DRAIN_S)  # a process that left the group may still hold the pipe
    timed_out = timed_out or (stop is not None and stop.is_set())
    code = None if timed_out else proc.returncode
    return ProcResult(code, sink.text(), time.monotonic() - began, timed_out=timed_out)
