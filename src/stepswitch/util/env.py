"""The environment for commands the agent and the gates run: the user's, without secrets."""

from __future__ import annotations

import os
from collections.abc import Iterable

from stepswitch.util.secrets import looks_secret


def clean_env(extra_secret_names: Iterable[str] = ()) -> dict[str, str]:
    """os.environ without what looks secret (util.secrets) and the given variable names."""
    extra = {n.upper() for n in extra_secret_names}
    env = {
        name: value
        for name, value in os.environ.items()
        if not looks_secret(name, value) and name.upper() not in extra
    }
    # Bytecode written by the project's tests is not part of the change.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
