"""Bytecode the gates must not run: Python loads `__pycache__/<module>.cpython-XY.pyc` instead of
the source when the file's header matches the source's modification time and size, both easy to
read, and `PYTHONDONTWRITEBYTECODE` (which every gate command has) stops Python writing bytecode,
not reading it. So before each gate run of a task, every compiled file in the worktree goes
(ADR 0012): what the gates test is then compiled from the worktree's sources."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# Folders that are not the project's sources: never walked (virtual environments by pyvenv.cfg).
_SKIPPED = frozenset({".git", ".ssw", "node_modules", ".venv", "venv"})


def drop_bytecode(root: Path) -> int:
    """Remove every `__pycache__` folder and stray `.pyc` file under `root` (virtual
    environments, .git and .ssw left alone). Returns how many were removed."""
    removed = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        keep = []
        for name in dirs:
            path = here / name
            if name in _SKIPPED or (path / "pyvenv.cfg").exists() or path.is_symlink():
                continue
            if name == "__pycache__":
                shutil.rmtree(path, ignore_errors=True)
                removed += 1
            else:
                keep.append(name)
        dirs[:] = keep
        for name in files:
            if name.endswith((".pyc", ".pyo")):
                (here / name).unlink(missing_ok=True)
                removed += 1
    return removed
