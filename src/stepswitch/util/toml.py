"""Configuration files as pydantic models, with one error format: read a TOML file the user names
(or refuse it in one line), and name the key of a model's first validation error."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stepswitch.errors import ConfigError
from stepswitch.util.inputs import read_text_input


def read_toml(path: Path, what: str, fix: str) -> dict[str, Any]:
    """The TOML table in `path`; a ConfigError naming the file for anything but a TOML file."""
    text = read_text_input(path, what, fix)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), "(syntax)", str(exc), "fix the TOML syntax") from exc


def key_of(loc: Sequence[int | str], prefix: str = "", drop: Sequence[str] = ()) -> str:
    """A pydantic error location as the file writes it: `workers.mid.timeout`, `rules[0].when`.
    `drop` names parts that are no key in the file (a union member's class name)."""
    key = prefix
    for part in loc:
        if isinstance(part, str) and part in drop:
            continue
        if isinstance(part, int):
            key += f"[{part}]"
        else:
            key += f".{part}" if key else part
    return key or "(top level)"
