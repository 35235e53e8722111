"""A pytest kept imported for the test stages of one gate run (`gates.warm`). It imports nothing
of Stepswitch: it runs under the project's interpreter, inside the gates' sandbox.

Started as `python ssw_warm.py FD`, FD being this end of a socket pair only ssw holds the other
end of: there is no path to it for anything else. It imports pytest and its built-in plugins the
way `python -m pytest` would (the folder it starts in first on sys.path), then says
{"ready": true}, or {"ready": false, "why": ...} when it cannot be an exact stand-in (a module
it imported comes from the folder the tests can write, or it cannot make itself unreadable).

Each request is one JSON line, {"args": [...], "env": {...}, "cwd": "..."}, with one file
descriptor: where the stage's output goes. A forked child runs pytest with those arguments,
that environment and folder, stdout and stderr on that descriptor, stdin empty, in a process
group of its own, and exits as `python -m pytest` would. The answer is {"exit": status}
(128 + N for signal N, as a shell says it), after the child's process group is killed.

The server makes itself non-dumpable first, so a test in a stage cannot read or trace it, and the
child closes the socket before pytest starts. Anything arriving from ssw while a stage runs, or
ssw's end closing, kills the stage; the end closing also ends the server.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import selectors
import signal
import socket
import sys

PR_SET_DUMPABLE = 4
MAX_REQUEST = 1 << 24


def _set_dumpable(value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_DUMPABLE, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _under(path: str, folder: str) -> bool:
    real = os.path.realpath(path)
    return real == folder or real.startswith(folder + os.sep)


def _prepare(cwd: str) -> str | None:
    """Import what `python -m pytest` imports before it reads its configuration; why not, if a
    warm pytest would not be the same as a fresh one."""
    if not _set_dumpable(0):
        return "cannot make the warm pytest non-dumpable (prctl)"
    sys.path[0] = cwd  # what `python -m` puts first
    import pytest
    from _pytest.config import default_plugins

    for name in default_plugins:
        importlib.import_module(f"_pytest.{name}")
    folder = os.path.realpath(cwd)
    # The interpreter's own folders are read-only to the tests, even inside theirs (a .venv).
    own = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and _under(path, folder) and not any(_under(path, p) for p in own):
            return f"{name} is imported from {path}, inside the tests' folder"
    del pytest
    return None


def _status(wait_status: int) -> int:
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def _serve(control: socket.socket) -> dict[str, object] | None:
    """Answer requests until ssw's end closes (None), or, in a forked child, the request to run."""
    while True:
        message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 1)
        if not message:
            return None
        request = json.loads(message)
        if len(fds) != 1:
            raise SystemExit("ssw_warm: a request came without its output descriptor")
        pid = os.fork()
        if pid == 0:
            control.close()
            request["output"] = fds[0]
            return dict(request)
        os.close(fds[0])
        status = _wait(control, pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # what the stage left running goes with it
        if status is None:
            return None
        control.sendall(json.dumps({"exit": status}).encode("utf-8") + b"\n")


def _wait(control: socket.socket, pid: int) -> int | None:
    """The child's exit status; None when ssw spoke or closed first (the child is killed)."""
    pidfd = os.pidfd_open(pid)
    with selectors.DefaultSelector() as selector:
        selector.register(pidfd, selectors.EVENT_READ)
        selector.register(control, selectors.EVENT_READ)
        try:
            while True:
                for key, _ in selector.select():
                    if key.fileobj == pidfd:
                        return _status(os.waitpid(pid, 0)[1])
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    return None
        finally:
            os.close(pidfd)


def _run_stage(request: dict[str, object]) -> int:
    """In the forked child: become `python -m pytest <args>` and run."""
    os.setpgid(0, 0)
    _set_dumpable(1)  # the tests' own /proc/self reads work as in a fresh process
    output = int(str(request["output"]))
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    os.chdir(str(request["cwd"]))
    import pytest

    args = [str(a) for a in request["args"]]  # type: ignore[attr-defined]
    sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py"), *args]
    # What `python -m pytest` runs (console_main, deprecated since pytest 9.1, adds only a
    # broken-pipe guard): pytest.main, its exit code, its output flushed.
    try:
        return int(pytest.main(args))
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def main() -> int:
    control = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ssw decides when this ends
    gc.disable()  # imports make no garbage worth the collector's passes; enabled before a fork
    try:
        why = _prepare(os.getcwd())
    except Exception as exc:  # pytest missing or broken: say why, and stay cold
        why = f"{type(exc).__name__}: {exc}"
    hello = {"ready": why is None} | ({"why": why} if why else {})
    control.sendall(json.dumps(hello).encode("utf-8") + b"\n")
    if why is not None:
        return 0
    # What the imports made lives as long as the server: out of the collector's sight, so a
    # stage's collections (pytest runs several as it ends) do not walk it, nor copy every page
    # of it from the server as they write to each object's header (ADR 0019 addendum).
    gc.freeze()
    gc.enable()
    request = _serve(control)
    if request is None:
        return 0
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return _run_stage(request)


if __name__ == "__main__":
    raise SystemExit(main())
