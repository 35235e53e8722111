"""Run folders that are links: a report over a runs folder reads only what is inside it, so a run
folder (or its run.json, steps.jsonl) that is a symbolic link, or resolves outside, is skipped
and said, never followed."""

from __future__ import annotations

import os
from pathlib import Path

RECORD_FILES = ("run.json", "steps.jsonl")


def not_followed(root: Path, folder: Path) -> str | None:
    """Why `folder` (at or below `root`) is not read, or None when all of it is inside `root`."""
    shown = folder.relative_to(root).as_posix() if folder.is_relative_to(root) else str(folder)
    if folder != root and folder.is_symlink():
        target = os.readlink(folder)
        return f"{shown} is a symbolic link (to {target}): not followed"
    try:
        top = root.resolve(strict=True)
        if not folder.resolve(strict=True).is_relative_to(top):
            return f"{shown} resolves outside {root}: not followed"
        for name in RECORD_FILES:
            path = folder / name
            if path.is_symlink() and not path.resolve().is_relative_to(folder.resolve()):
                return f"{shown}/{name} is a symbolic link out of its folder: not followed"
    except (OSError, RuntimeError) as exc:  # a loop of links, or a folder that went away
        return f"{shown} cannot be resolved ({exc}): not followed"
    return None
