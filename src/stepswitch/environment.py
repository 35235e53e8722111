"""The environment for commands the agent and the gates run: the user's, without secrets."""

from __future__ import annotations

import os
from collections.abc import Iterable

_SECRET_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET", "_CREDENTIALS")
_SECRET_PARTS = ("PASSWORD", "PASSWD", "SECRET")
_SECRET_NAMES = frozenset({"API_KEY", "TOKEN", "KEY"})


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return (
        upper in _SECRET_NAMES
        or upper.endswith(_SECRET_SUFFIXES)
        or any(part in upper for part in _SECRET_PARTS)
    )


def clean_env(extra_secret_names: Iterable[str] = ()) -> dict[str, str]:
    """os.environ without API keys, tokens, passwords and the given variable names."""
    extra = {n.upper() for n in extra_secret_names}
    env = {
        name: value
        for name, value in os.environ.items()
        if not is_secret_name(name) and name.upper() not in extra
    }
    # Bytecode written by the project's tests is not part of the change.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
