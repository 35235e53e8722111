"""Bytecode the gates must not run: Python loads `__pycache__/<module>.cpython-XY.pyc` instead of
the source when the file's header matches the source's modification time and size, both easy to
read (or, for an unchecked-hash .pyc, without looking at the source at all), and
`PYTHONDONTWRITEBYTECODE` (which every gate command has) stops Python writing bytecode, not
reading it. So before each gate run of a task, every compiled file in the worktree goes, in
every folder whatever it holds (a `pyvenv.cfg` the agent wrote makes no folder an environment):
only the gates' own interpreter's environment, by its known path, keeps its bytecode (ADR 0012).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def drop_bytecode(root: Path, keep: Path | None = None) -> int:
    """Remove every `__pycache__` folder and stray `.pyc`/`.pyo` file under `root`, except under
    `keep` (the gates' interpreter's virtual environment, when it lies in the tree); links are
    not followed. Returns how many were removed."""
    removed = 0
    kept = keep.resolve() if keep is not None else None
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        walk_on = []
        for name in dirs:
            path = here / name
            if path.is_symlink() or (kept is not None and path.resolve() == kept):
                continue
            if name == "__pycache__":
                shutil.rmtree(path, ignore_errors=True)
                removed += 1
            else:
                walk_on.append(name)
        dirs[:] = walk_on
        for name in files:
            if name.endswith((".pyc", ".pyo")):
                (here / name).unlink(missing_ok=True)
                removed += 1
    return removed
