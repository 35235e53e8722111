"""`ssw ARGS` as a user runs it, for the tests: `run_ssw_cli` returns what `subprocess.run([python,
"-m", "stepswitch", *ARGS], capture_output=True, text=True)` would, from a child forked by one
server per test process that has imported ssw already (tests/ssw_zygote.py, ADR 0043).

Each command is still a process of its own: its own pid, environment, folder and standard
streams (no input), its exit status, atexit handlers and children. What differs from a fresh
interpreter: ssw's modules are imported before its environment is set (ssw reads none at
import), and /proc/PID/environ shows the server's start environment (tests of what that file
holds run ssw with `fresh=True`, a real `python -m stepswitch`).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

ZYGOTE = Path(__file__).resolve().parent / "ssw_zygote.py"
READY_TIMEOUT_S = 120.0


class _Zygote:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        self.proc = subprocess.Popen(
            [sys.executable, str(ZYGOTE), str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        theirs.close()
        self.sock = ours
        self.pending = b""  # what came after the last whole line read
        if self._answer(READY_TIMEOUT_S) != {"ready": True}:
            raise RuntimeError("tests/ssw_zygote.py did not start")

    def _answer(self, timeout_s: float) -> dict[str, object] | None:
        """The server's next line, or None when none comes within `timeout_s` or it ended.
        Two answers can arrive together (a command that ends at once): the second waits here."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.sock], [], [], max(deadline - time.monotonic(), 0))
            chunk = self.sock.recv(65536) if ready else b""
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return dict(json.loads(line))

    def close(self) -> None:
        """Its end closing ends the server."""
        self.sock.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_lock = threading.Lock()
_zygote: _Zygote | None = None


def _server() -> _Zygote:
    global _zygote
    if _zygote is None or _zygote.proc.poll() is not None:
        _zygote = _Zygote()
        atexit.register(_zygote.close)
    return _zygote


def run_ssw_cli(
    args: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    fresh: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`ssw ARGS` with `env` (default: this process's environment) in `cwd`, its output
    captured as text. `fresh`: a real `python -m stepswitch` process instead."""
    argv = [str(a) for a in args]
    command = [sys.executable, "-m", "stepswitch", *argv]
    if fresh:
        return subprocess.run(
            command,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    environment = dict(env if env is not None else os.environ)
    folder = str(cwd if cwd is not None else os.getcwd())
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        open(os.devnull, "rb") as nothing,
    ):
        with _lock:
            zygote = _server()
            message = {"args": argv, "env": environment, "cwd": folder}
            socket.send_fds(
                zygote.sock,
                [json.dumps(message).encode() + b"\n"],
                [nothing.fileno(), out.fileno(), err.fileno()],
            )
            started = zygote._answer(READY_TIMEOUT_S)
            if started is None:
                raise RuntimeError("tests/ssw_zygote.py did not fork the command")
            done = zygote._answer(timeout)
            if done is None:  # the timeout: the command goes, the server answers for it
                _kill_group(int(str(started["pid"])))
                zygote._answer(30.0)
        out.seek(0)
        err.seek(0)
        stdout, stderr = _text(out.read()), _text(err.read())
    if done is None:
        raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
    return subprocess.CompletedProcess(command, int(str(done["exit"])), stdout, stderr)


def _text(data: bytes) -> str:
    """As `text=True` reads it: UTF-8 here, universal newlines."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
