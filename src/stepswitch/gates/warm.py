"""A warm pytest: the tests gate's stages forked from a process that has pytest imported already
(`ssw_pytest/ssw_warm.py`), instead of a fresh `python -m pytest` each (ADR 0006).

Starting pytest costs about 0.3 s before it reads any configuration, and a stage that runs the
few tests which ran a changed line takes about as long again: half the time to a first failing
verdict. One server serves the stages of one gate run and is then closed; in `ssw run` the next
one starts as an edit begins, while the model works, so the edit's stages find it ready (ADR
0041), and the first also serves the pre-flight's collection and call-map trace, which run the
base commit's own tests (ADR 0044). A server never outlives its gate run, so nothing a test did
in one run's process can reach the next run.

It stands in only for a stage command that is exactly `<the gates' python> -m pytest <args>`,
and only with the environment it was started with (apart from the two names each stage sets):
any other command, a server that is not ready or that ends mid-stage, runs the stage the usual
way, so the verdict always comes from a complete pytest run. It runs inside the gates' sandbox,
reached through a socket pair ssw holds the only other end of.

A thread reads the server's hello as soon as it comes. A server that says it cannot stand in
(something it imported comes from the tests' folder: code the model can write ran in it), or that
ends or garbles its hello, is killed with its whole sandbox at once, not left to the next stage's
`ready`: in `ssw run` that server would otherwise live on beside the model's next steps. Ending a
sandbox means killing the first process of its PID namespace (the child of what ssw started,
under bwrap and unshare alike) and waiting for what ssw started: the kernel ends every other
process of a namespace before its first one is gone, so when `close` returns, nothing the server
started is running, threads and `setsid` grandchildren included. Killing only ssw's own child
returns before that: the namespace then dies a moment later, by a parent-death signal.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from stepswitch.util.proc import DRAIN_S, HeadTail, ProcResult, kill_group, pump, track_group
from stepswitch.util.sandbox import Confinement, reaped

SERVER = Path(__file__).resolve().parent / "ssw_pytest" / "ssw_warm.py"
READY_TIMEOUT_S = 120.0  # importing pytest on a loaded machine; past it, stages run cold
CLOSE_WAIT_S = 5.0
PER_STAGE_NAMES = frozenset({"SSW_SELECT", "PYTEST_ADDOPTS"})  # read by pytest, not at start


def pytest_args(command: str, python: Path, env: Mapping[str, str]) -> list[str] | None:
    """The arguments of a stage command that is exactly `<python> -m pytest <args>` (its first
    word that interpreter, as a path or found on the environment's PATH); None for any other
    command, which then runs as written."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 3 or words[1:3] != ["-m", "pytest"] or shlex.join(words) != command.strip():
        return None
    found = words[0] if os.sep in words[0] else shutil.which(words[0], path=env.get("PATH"))
    if found is None or os.path.abspath(found) != os.path.abspath(python):
        return None
    return words[3:]


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_namespace(pid: int) -> None:
    """SIGKILL the first process of the PID namespace that `pid` (bwrap or unshare, started by
    ssw) made: its child. Each is signalled through a pidfd opened while it is still `pid`'s
    child, so a pid reused meanwhile is never hit."""
    for child in _children(pid):
        try:
            pidfd = os.pidfd_open(child)
        except OSError:
            continue  # already gone
        try:
            if child in _children(pid):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(pidfd)


def _hello(line: bytes | None) -> dict[str, object]:
    try:
        hello = json.loads(line) if line else {}
    except ValueError:
        return {}
    return hello if isinstance(hello, dict) else {}


# What starts a warm pytest: WarmPytest itself, or a caller's subclass (tests count the starts).
WarmStarter = Callable[[Path, Mapping[str, str], Path, "Confinement | None"], "WarmPytest"]


class WarmPytest:
    """One server, started at once, its hello read by a thread as soon as it comes; `run` waits
    for that hello."""

    def __init__(
        self, python: Path, env: Mapping[str, str], root: Path, confinement: Confinement | None
    ) -> None:
        self.env = dict(env)
        self.root = root
        self.why = ""  # why it cannot stand in, once known: "is not used: ..."
        self._ready: bool | None = None  # None until the hello is read (or it is closed)
        self._buffer = b""
        self._heard = threading.Event()  # set once `_ready` is decided for good
        self._lock = threading.Lock()  # one closing at a time; a second waits for the first
        self._namespaced = confinement is not None and confinement.sandbox.confines
        ours, theirs = socket.socketpair()
        argv = [str(python), str(SERVER), str(theirs.fileno())]
        try:
            self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                confinement.wrap(argv, root) if confinement else argv,
                cwd=root,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # Ctrl-C reaches ssw, which closes it
            )
        except OSError as exc:
            self._proc, self._ready = None, False
            self.why = f"could not start ({python}: {exc.strerror})"
        finally:
            theirs.close()
        self._sock = ours
        if self._proc is None:
            self._heard.set()
            return
        track_group(self._proc.pid, reaped(confinement))
        threading.Thread(target=self._listen, name="ssw-warm-hello", daemon=True).start()

    def _listen(self) -> None:
        """Read the hello; end the server at once when it cannot stand in."""
        hello = _hello(self._line(READY_TIMEOUT_S))
        with self._lock:
            if self._ready is None:  # not closed meanwhile
                self._ready = hello.get("ready") is True
                if not self._ready:
                    self.why = f"is not used: {hello.get('why') or 'it did not start'}"
        if not self._ready:
            self._end(grace_s=0.0)
        self._heard.set()

    def ready(self, timeout_s: float = READY_TIMEOUT_S) -> bool:
        """Wait (at most `timeout_s`) for the hello; whether the server can stand in."""
        if not self._heard.wait(timeout_s):
            with self._lock:
                if self._ready is None:
                    self._ready = False
                    self.why = "is not used: it did not start"
            self._end(grace_s=0.0)
        return self._ready is True

    def run(
        self, args: list[str], env: Mapping[str, str], timeout_s: float, output_cap: int
    ) -> ProcResult | None:
        """One stage: pytest with `args` in the root folder, its output kept head and tail up to
        `output_cap`; None when the warm pytest cannot run it (then run it the usual way)."""
        differing = {k for k in {*env, *self.env} if env.get(k) != self.env.get(k)}
        if differing - PER_STAGE_NAMES or not self.ready():
            return None
        request = {"args": args, "env": dict(env), "cwd": str(self.root)}
        began = time.monotonic()
        read_end, write_end = os.pipe()
        try:
            try:
                socket.send_fds(
                    self._sock, [json.dumps(request).encode("utf-8") + b"\n"], [write_end]
                )
            finally:
                os.close(write_end)
        except OSError:
            os.close(read_end)
            self._fail("ended before the stage")
            return None
        sink = HeadTail(output_cap)
        reader = threading.Thread(target=pump, args=(read_end, sink), daemon=True)
        reader.start()
        line = self._line(timeout_s)
        if line is None:  # the timeout: closing the socket kills the stage
            self._fail("was ended: the stage timed out")
        reader.join(timeout=DRAIN_S)
        if not reader.is_alive():
            os.close(read_end)
        seconds = time.monotonic() - began
        if line is None:
            return ProcResult(None, sink.text(), seconds, timed_out=True)
        try:
            status = int(json.loads(line)["exit"])
        except (ValueError, KeyError, TypeError):
            self._fail("ended during the stage")
            return None
        return ProcResult(status, sink.text(), seconds)

    def _line(self, timeout_s: float) -> bytes | None:
        """The next line from the server; b"" when it closed, None at the timeout."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                self._sock.settimeout(left)
                chunk = self._sock.recv(65536)
            except TimeoutError:
                return None
            except OSError:  # closed here, by `close` from another thread
                chunk = b""
            if not chunk:
                return b""
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _fail(self, why: str) -> None:
        self.why = why
        self._ready = False
        self.close()

    def close(self) -> None:
        """End the server and whatever stage it runs, and its sandbox; idempotent. The server
        ends by itself when its socket closes (killing a running stage first); if it has not
        within CLOSE_WAIT_S, it is killed."""
        with self._lock:
            if self._ready is None:
                self._ready = False
                self.why = self.why or "was closed before it was ready"
        self._end(grace_s=CLOSE_WAIT_S)

    def _end(self, grace_s: float) -> None:
        """Close the socket; after `grace_s` for the server to end by itself, kill its sandbox.
        Returns once it is gone (a second caller, once the first has finished)."""
        with self._lock:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)  # wakes the thread reading the hello
            self._sock.close()
            proc, self._proc = self._proc, None
            if proc is None:
                return
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=grace_s)
            if proc.returncode is None and self._namespaced:
                _kill_namespace(proc.pid)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=CLOSE_WAIT_S)
            kill_group(proc.pid)  # without a namespace, or one that would not end: the group
            proc.wait()
