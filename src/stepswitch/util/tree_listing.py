"""What `git ls-files -z --others --exclude-standard` says of a run's tree, read; and the
`.gitignore` files that would keep git from answering, taken out (util/git_tree.py's listing).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def read_listing(out: bytes, prefix: str) -> tuple[set[str], set[str]]:
    """The files git listed, relative to the tree's top (`prefix`: the tree's folder in the
    repository, its files only), and apart the folders that hold another repository (listed
    with a trailing slash)."""
    paths: set[str] = set()
    nested: set[str] = set()
    for raw in out.split(b"\0"):
        name = raw.decode("utf-8", "surrogateescape")
        if prefix:
            if not name.startswith(prefix):
                continue
            name = name[len(prefix) :]
        if name.endswith("/"):
            nested.add(name.rstrip("/"))
        elif name:
            paths.add(name)
    return paths, nested


def remove_blocking_ignores(work_tree: Path) -> list[str]:
    """Remove every `.gitignore` under `work_tree` that is neither a file nor a link nor a
    folder (a FIFO, a socket: git opens each folder's and would wait on it for ever); the paths
    removed, relative to the tree."""
    removed = []
    for here, dirs, files in os.walk(work_tree):  # follows no link to a folder
        dirs[:] = [d for d in dirs if d != ".git"]
        if ".gitignore" in files:
            path = Path(here, ".gitignore")
            kind = path.lstat().st_mode
            if not (stat.S_ISREG(kind) or stat.S_ISLNK(kind)):
                path.unlink()
                removed.append(path.relative_to(work_tree).as_posix())
    return removed
