"""Which Markdown files `ssw prove` lints (ADR 0077): every one the repository ships, that is
every file git would commit (tracked, or untracked and not ignored; every file outside a
checkout) whose name ends in `.md`, but the data of a project inside it.

A Markdown file is data when a folder between it and the root holds its own project: a
`task.toml` (a bench task: its instruction is what the agent reads) or a `pyproject.toml` (a
fixture or sample repository the agent works on: its README is part of the repository the task
hands over). What such a file says is the task's, not the project's, and rewording it changes the
task; the project's own READMEs around them (a suite's, the bench's) are linted.
"""

from __future__ import annotations

from pathlib import Path

from stepswitch.errors import ConfigError
from stepswitch.util.hashing import tree_files

PROJECT_FILES = ("task.toml", "pyproject.toml")


def is_data(root: Path, rel: str) -> bool:
    """Whether `rel` lies inside a project of its own below the root (rule above)."""
    folder = (root / rel).parent
    while folder != root and root in folder.parents:
        if any((folder / name).is_file() for name in PROJECT_FILES):
            return True
        folder = folder.parent
    return False


def shipped_markdown(root: Path) -> dict[str, str]:
    """The text of every Markdown file the lint reads, by its path from the root, in path order.
    A file that is not UTF-8 is exit 2 naming it; symlinks are not followed."""
    found = {}
    for path in tree_files(root):
        rel = path.relative_to(root).as_posix()
        if path.suffix != ".md" or path.is_symlink() or is_data(root, rel):
            continue
        try:
            found[rel] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ConfigError(rel, "its text", "is not UTF-8") from None
    return found


__all__ = ["PROJECT_FILES", "is_data", "shipped_markdown"]
