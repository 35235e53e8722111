"""A process that has imported the `ssw` command once and forks a child per command: the child
becomes `python -m stepswitch ARGS` with the request's environment, folder and standard streams,
and leaves as that process would (exit status, atexit, non-daemon threads joined).

Started by tests/ssw_cli.py as `python ssw_zygote.py FD`, FD one end of a socket pair. Each
request is one JSON line {"args": [...], "env": {...}, "cwd": "..."} with three descriptors (the
child's stdin, stdout and stderr); the answers are {"pid": N} when the child has started, then
{"exit": STATUS} (-N for signal N, as subprocess says it). The end closing ends the server.

Why: importing ssw costs about 0.35 CPU-seconds of each `ssw` process, and the suite starts
several hundred of them on a 2-core machine (ADR 0043). Nothing runs here between the imports
(ssw's modules, httpcore) and the fork but making the Click command, which every `ssw` makes
first, so each child starts as a fresh process would after its imports; with one thing more
done: `ssw prove`'s reading of ssw's own modules (their hashes and imports, which it keeps for
its process).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import pkgutil
import signal
import socket
import sys

MAX_REQUEST = 1 << 24


def _prepare() -> None:
    # What `ssw` itself does before httpx is imported (stepswitch.cli.main, ADR 0042).
    from stepswitch.util.lean_imports import leave_out_unused_imports

    leave_out_unused_imports()
    # httpcore, which the first HTTP client a command makes imports.
    import httpx._transports.default  # noqa: F401

    import stepswitch.cli.app

    # And ssw's modules the commands import as they run (the bench's, the site's, the demo's):
    # all but those of the extras whose libraries set themselves up as they are imported
    # (dask's logging, OpenTelemetry's), and none that is a program.
    for found in pkgutil.walk_packages(stepswitch.__path__, "stepswitch."):
        name = found.name
        if not name.endswith("__main__") and not any(x in name for x in ("cluster", "otel")):
            importlib.import_module(name)
    stepswitch.cli.app.click_command()  # what each `ssw` makes first: made once, here
    # And what `ssw prove` reads of the code imported above: each module's hash and imports
    # (stepswitch.claims.code keeps them for its process), parsed once here rather than in each
    # forked prove (0.25 of its 0.33 CPU-s; a suite run forks some two hundred). The children
    # run the code read here, so its hashes are theirs; no test edits ssw's own files.
    from stepswitch.claims.code import code_hashes

    code_hashes(name for name in sys.modules if name.startswith("stepswitch"))


def _child(request: dict[str, object], fds: list[int]) -> None:
    os.setpgid(0, 0)  # a timeout kills the command's group, never the server
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    os.chdir(str(request["cwd"]))
    args = [str(a) for a in request["args"]]  # type: ignore[attr-defined]
    import stepswitch

    main_py = os.path.join(os.path.dirname(stepswitch.__file__), "__main__.py")
    sys.argv = [main_py, *args]
    # As `python -m stepswitch` shows it: Click's program name, and what a re-exec runs again.
    sys.modules["__main__"].__package__ = "stepswitch"
    sys.orig_argv = [sys.executable, "-m", "stepswitch", *args]
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _serve(control: socket.socket) -> bool:
    """Answer requests until the end closes (False); in a forked child, True once it has become
    the command."""
    while True:
        message, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 3)
        if not message:
            return False
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            control.close()
            _child(request, fds)
            return True
        for fd in fds:
            os.close(fd)
        control.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        control.sendall(json.dumps({"exit": status}).encode() + b"\n")


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the tests end it by closing the socket
    # As the warm pytest does (ADR 0019 addendum): the collector off while importing, then the
    # imports' objects out of its sight, so a child's collections neither walk them nor copy
    # their pages: 125 -> 49 ms of CPU for a forked `ssw policy check`.
    gc.disable()
    _prepare()
    gc.freeze()
    gc.enable()
    control.sendall(b'{"ready": true}\n')
    if not _serve(control):
        return
    from stepswitch.cli import main as ssw_main

    ssw_main()


if __name__ == "__main__":
    main()
