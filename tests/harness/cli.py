"""ssw and other processes as the tests start them.

`run_ssw_cli` is the one way to run `ssw ARGS` and read its exit code and output: a child forked
by tests/ssw_zygote.py, a process of its own with ssw already imported (ADR 0043). The fallback
is `fresh=True`, a real `python -m stepswitch`, for what only a new interpreter shows (what
/proc/PID/environ holds). A test that must hold a running ssw (a signal, a terminal, a process
it kills) starts `python -m stepswitch` with subprocess.Popen itself, with `ssw_env()`.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from tests.ssw_cli import run_ssw_cli

__all__ = ["run_on_terminal", "run_process", "run_pytest", "run_ssw_cli", "ssw_env", "wait_for"]


def ssw_env(**extra: str) -> dict[str, str]:
    """This process's environment for an ssw it starts: no provider key (`*_API_KEY`), no
    SSW_LEDGER (the repository's own ledger), no bytecode written; then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("SSW_LEDGER", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return {**env, **extra}


def run_process(
    command: Sequence[str],
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    timeout: float = 120,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`command` in `cwd` with `env` (no input), its output captured as text; a failing exit
    status is returned, unless `check` (then raised)."""
    return subprocess.run(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )


def run_pytest(
    root: str | os.PathLike[str],
    env: Mapping[str, str],
    *args: str,
    python: str | os.PathLike[str] = sys.executable,
) -> subprocess.CompletedProcess[str]:
    """A plain `python -m pytest -q -p no:cacheprovider ARGS` in `root` (no gate around it),
    the control a gates test compares with."""
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return run_process(command, root, env)


def wait_for(condition: Callable[[], bool], what: str, limit_s: float = 120) -> None:
    """Poll until `condition()` holds (a file another process writes, a process's end); fail
    naming `what` after `limit_s` rather than hang. The check is the condition, not the time."""
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)


def run_on_terminal(
    command: Sequence[str], env: Mapping[str, str], timeout: float = 120
) -> tuple[int, str]:
    """`command` with a pseudo-terminal as its input and output, as a user's shell starts it;
    its exit status and everything it wrote there (terminal codes included)."""
    main, child = pty.openpty()
    proc = subprocess.Popen(list(command), stdin=child, stdout=child, stderr=child, env=dict(env))
    os.close(child)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(main, 65536)
                except OSError:  # the child closed its side
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(main)
    return proc.wait(timeout=timeout), out.decode("utf-8", "replace")
