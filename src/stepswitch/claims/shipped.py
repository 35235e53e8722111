"""Which Markdown files `ssw prove` lints (ADR 0077): every one the repository ships, that is
every file git would commit (tracked, or untracked and not ignored; every file outside a
checkout) whose name ends in `.md`, but the data of a project inside it and a claim's evidence.

A Markdown file is data when a folder between it and the root holds its own project: a
`task.toml` (a bench task: its instruction is what the agent reads) or a `pyproject.toml` (a
fixture or sample repository the agent works on: its README is part of the repository the task
hands over). What such a file says is the task's, not the project's, and rewording it changes the
task; the project's own READMEs around them (the bench's) are linted.

A Markdown file that is, or lies inside, an input a claim names in claims.yaml (a suite folder's
README) is evidence: `ssw prove` hashes it with the rest of the input, and a change to it is a
stale input of that claim, so it cannot change unseen; rewording it would re-open the claim.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def is_evidence(rel: str, evidence: Iterable[str]) -> bool:
    """Whether `rel` is one of the claims' evidence inputs or lies in one (rule above)."""
    return any(rel == p.rstrip("/") or rel.startswith(p.rstrip("/") + "/") for p in evidence)


def shipped_markdown(root: Path, evidence: Iterable[str] = ()) -> dict[str, str]:
    """The text of every Markdown file the lint reads, by its path from the root, in path order;
    `evidence`, the claims' inputs, are left out. A file that is not UTF-8 is exit 2 naming it;
    symlinks are not followed."""
    inputs = tuple(evidence)
    found = {}
    for path in tree_files(root):
        rel = path.relative_to(root).as_posix()
        if path.suffix != ".md" or path.is_symlink() or is_data(root, rel):
            continue
        if is_evidence(rel, inputs):
            continue
        found[rel] = markdown_text(path, rel)
    return found


def markdown_text(path: Path, rel: str) -> str:
    """A shipped Markdown file's text; one that is not UTF-8 is exit 2 naming it (`rel`)."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(rel, "its text", "is not UTF-8") from None


__all__ = ["PROJECT_FILES", "is_data", "is_evidence", "markdown_text", "shipped_markdown"]
