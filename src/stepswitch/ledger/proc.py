"""Who holds a reservation, and whether that process can still settle it."""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True)
class Identity:
    pid: int
    pid_start: str | None  # the process's start time in clock ticks (Linux); tells pid reuse apart
    host: str
    boot_id: str | None  # None where the OS does not say (then only the pid is checked)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def boot_id() -> str | None:
    return _read(_BOOT_ID)


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat from field 3 on; the command name before it may hold spaces and ')'."""
    stat = _read(Path(f"/proc/{pid}/stat"))
    if stat is None or ")" not in stat:
        return []
    return stat.rsplit(")", 1)[1].split()


def start_time(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else None  # field 22: start time in clock ticks


def current() -> Identity:
    pid = os.getpid()
    return Identity(pid, start_time(pid), socket.gethostname(), boot_id())


def reserved_now(me: Identity) -> tuple[int, str | None, str, str | None, float]:
    """A reserved row's pid, pid_start, host, boot_id and reserved_at: `me`, now."""
    return (me.pid, me.pid_start, me.host, me.boot_id, time.time())


def is_orphan(pid: int, pid_start: str | None, host: str, boot: str | None, me: Identity) -> bool:
    """True when the process that reserved cannot settle any more. Rows from another host are
    never judged here: their process may well be alive (they stay open, counted at the high)."""
    if host != me.host:
        return False
    if boot is not None and me.boot_id is not None and boot != me.boot_id:
        return True  # the machine restarted since: every process of that boot is gone
    if pid == me.pid:
        return pid_start is not None and me.pid_start is not None and pid_start != me.pid_start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, another user's: still compare start times below
    fields = _stat(pid)
    if fields and fields[0] in ("Z", "X"):
        return True  # killed, not yet reaped by its parent
    now = fields[19] if len(fields) > 19 else None
    return pid_start is not None and now is not None and now != pid_start  # the pid was reused
