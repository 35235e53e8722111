"""The environment for commands the agent and the gates run: the user's, without secrets."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from stepswitch.util.secrets import is_secret_name


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


def bytecode_env(env: Mapping[str, str], folder: Path) -> dict[str, str]:
    """`env` for the gates: Python reads and writes bytecode only under `folder`
    (PYTHONPYCACHEPREFIX), never in the tree's __pycache__ folders, where a command of the agent
    could leave a compiled file that does not match its source; kept there, it is compiled
    once per run rather than at every gate command."""
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(folder)
    return out
