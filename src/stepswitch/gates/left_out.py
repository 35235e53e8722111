"""Files in a run's worktree that its commit leaves out and that Python or pytest would load
(ADR 0047).

The gates run in the agent's worktree, a plain folder; the run's commit is what git builds from
it, and that leaves out whatever the tree's ignore patterns (which the agent can write) name, or
git cannot hold. A module, a `conftest.py`, a `.pth` or a distribution's metadata
(`*.dist-info`, `*.egg-info`: entry points, what `importlib.metadata` reports) below an import
root would be judged by the gates without being in the change: the commit would show only the
wrong line. Such a file fails the gates naming it. Bytecode is not listed: it is removed before
each gate run (`gates.bytecode`).

What counts as below an import root: any folder reached from the worktree's root through
folders whose names Python can import (packages, namespace packages), or that hold the base
commit's test files (pytest puts their folders on sys.path, `my-tests/` too), but not into a
virtual environment (`pyvenv.cfg`), whose files nothing imports from the tree. A link to a
folder is named, not followed.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterable
from pathlib import Path, PurePosixPath

from stepswitch.gates.impacted import is_test_file
from stepswitch.util.git_objects import leftover

LEFT_OUT_CHECK = "ssw:left-out"
LEFT_OUT_FIX = (
    "Remove these files, or let the commit carry them (an ignore pattern leaves them out): "
    "the gates judge only what the commit holds, and Python or pytest would load these."
)
# Files Python imports or runs from a folder on sys.path (bytecode aside: it is removed).
LOADABLE_SUFFIXES = (".py", ".pyw", ".so", ".pyd", ".pth")
METADATA_SUFFIXES = (".dist-info", ".egg-info")


def _walked(name: str) -> bool:
    """A folder whose files an import could reach."""
    return name.isidentifier() or name.endswith(METADATA_SUFFIXES)


def test_folders(paths: Iterable[str]) -> set[str]:
    """The folders holding the test files among `paths`, and every folder above them: pytest
    puts a test file's folder on sys.path whatever its name (`my-tests/`)."""
    folders: set[str] = set()
    for path in paths:
        if is_test_file(path):
            folders |= {p.as_posix() for p in PurePosixPath(path).parents if p.name}
    return folders


def loadable_left_out(
    root: Path, committed: Container[str], also_walked: Container[str] = ()
) -> dict[str, str]:
    """Each path under `root` that `committed` (paths relative to `root`) does not hold and
    Python or pytest would load, with why it counts; `also_walked`: folders (relative to
    `root`) walked whatever their names."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        rel_here = here.relative_to(root)
        meta = any(part.endswith(METADATA_SUFFIXES) for part in rel_here.parts)
        walk_on = []
        for name in sorted(dirs):
            path = here / name
            rel = (rel_here / name).as_posix()
            if not (_walked(name) or rel in also_walked) or (path / "pyvenv.cfg").exists():
                continue
            if path.is_symlink():
                if rel not in committed and name.isidentifier():
                    found[rel] = "a link to a folder"
                continue
            walk_on.append(name)
        dirs[:] = walk_on
        for name in sorted(files):
            rel = (rel_here / name).as_posix()
            if rel in committed or leftover(rel):
                continue
            if meta:
                found[rel] = "a distribution's metadata"
            elif name.endswith(LOADABLE_SUFFIXES):
                found[rel] = "importable"
    return found
