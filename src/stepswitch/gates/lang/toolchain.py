"""Whether the tool a repository declares is on the machine (the gates' PATH is the caller's:
util/child_env.py), and the note that says so when it is not: a declared tool that is missing
is never a silent skip."""

from __future__ import annotations

import os
import shutil


def on_path(tool: str) -> bool:
    return shutil.which(tool, path=os.environ.get("PATH")) is not None


def missing_note(tool: str, declared: str, gates: str) -> str:
    """`gates: no Rust test gate: Cargo.toml declares a crate, but cargo is not on PATH (...)`."""
    return (
        f"gates: no {gates}: {declared}, but {tool} is not on PATH (install it, or configure "
        "the gates in .stepswitch.toml)"
    )
