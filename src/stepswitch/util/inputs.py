"""Files the user names (a policy, a script, a task file, a preset): read as UTF-8 text, or refused
with one line that says which file, what is wrong with it and what to do."""

from __future__ import annotations

from pathlib import Path

from stepswitch.errors import ConfigError


def read_text_input(path: Path, what: str, fix: str) -> str:
    """The text of `path`; a ConfigError (exit 2) when it is missing, a folder, binary or not UTF-8.
    `what` names the file's kind ("policy file"), `fix` says which file to name instead."""
    source = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ConfigError(source, "(file)", f"no such {what}", "check the path") from exc
    except IsADirectoryError as exc:
        raise ConfigError(source, "(file)", f"is a folder, not a {what}", fix) from exc
    except OSError as exc:
        raise ConfigError(source, "(file)", f"cannot read it: {exc.strerror}", fix) from exc
    nul = data.find(b"\0")
    if nul >= 0:
        problem = f"is binary (a NUL byte at offset {nul}), not a {what}"
        raise ConfigError(source, "(file)", problem, fix)
    try:
        return data.decode("utf-8-sig")  # a byte-order mark, as some editors write, is dropped
    except UnicodeDecodeError as exc:
        problem = f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise ConfigError(source, "(file)", problem, "save it as UTF-8") from exc
