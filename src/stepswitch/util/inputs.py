"""Files the user names (a policy, a script, a task file, a preset, a repository's own config):
read as UTF-8 text, or refused with one line that says which file, what is wrong with it and
what to do. Only regular files are read (a FIFO, a device or a socket never returns, or never
ends), and never more than a bound per kind: `/dev/zero` as a policy once grew ssw to 4.4 GB."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from stepswitch.errors import ConfigError

# A config file, a script or a preset larger than this is not one: refused before it is parsed.
MAX_INPUT_BYTES = 8 << 20
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def read_input_bytes(path: Path, what: str, fix: str, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes`; a ConfigError (exit 2) when it
    is missing, not a regular file, unreadable or larger. Opening never waits on a FIFO's writer
    (O_NONBLOCK) and reading stops one byte past the bound."""
    source = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError as exc:
        raise ConfigError(source, "(file)", f"no such {what}", "check the path") from exc
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket, or a FIFO opened with no end to read from
            problem = f"is not a regular file, not a {what}"
            raise ConfigError(source, "(file)", problem, fix) from exc
        raise ConfigError(source, "(file)", f"cannot read it: {exc.strerror}", fix) from exc
    try:
        kind = stat.S_IFMT(os.fstat(fd).st_mode)
        if kind != stat.S_IFREG:
            noun = _KINDS.get(kind, "not a regular file")
            problem = f"is {noun}, not a {what}" if kind in _KINDS else f"is {noun}"
            raise ConfigError(source, "(file)", problem, fix)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ConfigError(source, "(file)", f"cannot read it: {exc.strerror}", fix) from exc
    finally:
        os.close(fd)
    if size > max_bytes:
        problem = f"is larger than a {what} may be ({_mib(max_bytes)})"
        raise ConfigError(source, "(file)", problem, fix)
    return b"".join(chunks)


def read_text_input(path: Path, what: str, fix: str, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The text of `path`; a ConfigError (exit 2) when it is missing, not a regular file, larger
    than `max_bytes`, binary or not UTF-8. `what` names the file's kind ("policy file"), `fix`
    says which file to name instead."""
    data = read_input_bytes(path, what, fix, max_bytes)
    nul = data.find(b"\0")
    if nul >= 0:
        problem = f"is binary (a NUL byte at offset {nul}), not a {what}"
        raise ConfigError(str(path), "(file)", problem, fix)
    try:
        return data.decode("utf-8-sig")  # a byte-order mark, as some editors write, is dropped
    except UnicodeDecodeError as exc:
        problem = f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise ConfigError(str(path), "(file)", problem, "save it as UTF-8") from exc
