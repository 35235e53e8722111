"""Keys out of every environment a child could read, ssw's own /proc/<pid>/environ included.

/proc/<pid>/environ shows the environment a process was *started* with, whatever os.environ says
later. So `hide_keys` re-execs the interpreter once without the secret variables and hands their
values to the new process through an inherited pipe: not argv, not the environment, not a file.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sys
from collections.abc import Iterable

from stepswitch.util.secrets import is_secret_name

MARKER = "SSW_KEYS_FD"  # set only for the re-exec'd process: the pipe's descriptor number

# Names util.secrets does not catch yet: personal access tokens, DSNs, session cookies.
_MORE_SECRET_SUFFIXES = ("_PAT", "_DSN", "_COOKIE", "_AUTH", "_PASS")
_URL_WITH_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.IGNORECASE)
_F_SETPIPE_SZ = 1031


def looks_secret(name: str, value: str) -> bool:
    """A secret by its name, or a URL that carries a password (DATABASE_URL=postgres://u:p@h)."""
    upper = name.upper()
    return (
        is_secret_name(name)
        or upper.endswith(_MORE_SECRET_SUFFIXES)
        or bool(_URL_WITH_PASSWORD.match(value))
    )


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
