"""Keys out of every environment a child could read, ssw's own /proc/<pid>/environ included.

/proc/<pid>/environ shows the environment a process was *started* with, whatever os.environ says
later. So `hide_keys` re-execs the interpreter once without the secret variables and hands their
values to the new process through an inherited pipe: not argv, not the environment, not a file.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from stepswitch.util.secrets import looks_secret

# looks_secret is util.secrets's, named here too for the callers that check keys by it.
__all__ = [
    "MARKER",
    "held_keys",
    "hide_keys",
    "looks_secret",
    "secrets_in_reach",
    "secrets_notice",
]

MARKER = "SSW_KEYS_FD"  # set only for the re-exec'd process: the pipe's descriptor number
_F_SETPIPE_SZ = 1031

_held: dict[str, str] = {}  # what hide_keys took out of the environment, for held_keys


def held_keys() -> dict[str, str]:
    """The secret variables `hide_keys` took out of this process's environment (a copy)."""
    return dict(_held)


def hide_keys(names: Iterable[str] = ()) -> dict[str, str]:
    """Call early, before threads or open files matter. Returns the secret variables (the given
    names and any secret-looking one) and makes sure this process's initial environment holds
    none of them: the first call re-execs with the same argv and working folder (so code before
    the call runs twice); the re-exec'd process reads the values back. A no-op without secrets.
    The values are not put back into os.environ: pass the dict to whatever needs a key."""
    wanted = {n.upper() for n in names}
    secrets = {
        name: value
        for name, value in os.environ.items()
        if value and (name.upper() in wanted or looks_secret(name, value))
    }
    for name in secrets:
        del os.environ[name]
    if MARKER in os.environ:  # the re-exec'd process; never exec again (a forged marker included)
        _held.update(_receive(os.environ.pop(MARKER)) | secrets)
        return dict(_held)
    if not secrets:
        return {}
    if sys.platform == "win32":  # no exec that keeps the process: only os.environ is cleaned
        _held.update(secrets)
        return secrets
    payload = json.dumps(secrets).encode()
    read_end, write_end = os.pipe()
    if len(payload) > 60_000:  # the whole payload must fit in the pipe before the exec
        fcntl.fcntl(write_end, _F_SETPIPE_SZ, len(payload) + 4096)
    os.write(write_end, payload)
    os.close(write_end)
    os.set_inheritable(read_end, True)
    env = {**os.environ, MARKER: str(read_end)}
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    argv = [sys.executable, *sys.orig_argv[1:]]
    os.execve(sys.executable, argv, env)
    raise AssertionError("unreachable")  # pragma: no cover


def _receive(fd_text: str) -> dict[str, str]:
    try:
        fd = int(fd_text)
        with os.fdopen(fd, "rb") as pipe:
            data = json.loads(pipe.read() or b"{}")
    except (ValueError, OSError):
        return {}  # a stale marker from outside: nothing was handed over
    return {str(k): str(v) for k, v in data.items()}


def _own_environ() -> dict[str, str]:
    """ssw's environment as any process of the user's reads it: /proc/<pid>/environ."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:  # no /proc to read it from; on Windows hide_keys cleaned only os.environ
        return {**os.environ, **(_held if sys.platform == "win32" else {})}
    pairs = (entry.partition(b"=") for entry in raw.split(b"\0") if entry)
    return {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, _, v in pairs}


def secrets_in_reach(command_env: Mapping[str, str]) -> list[str]:
    """The secret-looking variables an unconfined command can read: those in `command_env`, the
    environment it is given, and those still in ssw's own (its parent's /proc shows it)."""
    names = {name for name, value in command_env.items() if looks_secret(name, value)}
    names |= {name for name, value in _own_environ().items() if looks_secret(name, value)}
    return sorted(names)


def secrets_notice(command_env: Mapping[str, str]) -> str:
    """One line for the start of an unconfined run: which secret-looking variables its commands
    can read, or that they can read none (and which ones were taken out of their way)."""
    names = secrets_in_reach(command_env)
    if names:
        return f"secrets: the commands can read {', '.join(names)} (not taken out of their way)"
    if not _held:
        return "secrets: none can be read by the commands (no secret-looking variable is set)"
    taken = ", ".join(sorted(_held))
    return f"secrets: none can be read by the commands ({taken} taken out of every environment)"
