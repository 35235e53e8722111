"""Bytecode the gates must not run: Python loads `__pycache__/<module>.cpython-XY.pyc` instead of
the source when the file's header matches the source's modification time and size, both easy to
read, and `PYTHONDONTWRITEBYTECODE` (which every gate command has) stops Python writing bytecode,
not reading it. So before each gate run of a task, every compiled file in the worktree goes
(ADR 0012): what the gates test is then compiled from the worktree's sources."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from stepswitch.gates.impacted import SKIP_DIRS


def drop_bytecode(root: Path) -> int:
    """Remove every `__pycache__` folder and stray `.pyc` file under `root`, walking the folders
    the import graph reads (`impacted.SKIP_DIRS` and virtual environments left alone). Returns
    how many were removed."""
    removed = 0
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        keep = []
        for name in dirs:
            path = here / name
            if path.is_symlink():
                continue
            if name == "__pycache__":
                shutil.rmtree(path, ignore_errors=True)
                removed += 1
            elif name not in SKIP_DIRS and not (path / "pyvenv.cfg").exists():
                keep.append(name)
        dirs[:] = keep
        for name in files:
            if name.endswith((".pyc", ".pyo")):
                (here / name).unlink(missing_ok=True)
                removed += 1
    return removed
