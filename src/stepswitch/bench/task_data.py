"""A task's declared test data (`[tests] data`): globs relative to repo/ that name the files its
hidden tests read, which grading puts back from the start (`covers`), each checked to stay in
repo/ and to name a file of it when the task is loaded."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

from stepswitch.errors import ConfigError


def _segments_match(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":  # any number of folders, none included
        return any(_segments_match(pattern[1:], parts[i:]) for i in range(len(parts) + 1))
    return (
        bool(parts)
        and fnmatch.fnmatchcase(parts[0], pattern[0])
        and _segments_match(pattern[1:], parts[1:])
    )


def covers(patterns: Sequence[str], rel: str) -> bool:
    """A file at `rel` (posix, relative to the tree) is declared test data: a glob matches it or
    one of its folders (`*` stays within a name, `**` spans folders)."""
    parts = rel.split("/")
    return any(
        _segments_match(pattern.split("/"), parts[:end])
        for pattern in patterns
        for end in range(1, len(parts) + 1)
    )


def _files_of(root: Path) -> list[str]:
    """Every file under `root` (a link counts as a file, and is not followed), posix, sorted."""
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()
    )


def _data_globs(file: str, task: Path, patterns: Sequence[str]) -> None:
    """Each glob stays inside repo/ and names at least one of its files."""
    files = _files_of(task / "repo")
    for i, pattern in enumerate(patterns):
        key = f"tests.data[{i}]"
        parts = pattern.split("/")
        if pattern.startswith("/") or "\\" in pattern or any(p in ("", ".", "..") for p in parts):
            raise ConfigError(
                file, key, f"{pattern!r} is not a path inside repo/", 'e.g. "expected/*.json"'
            )
        if not any(covers([pattern], rel) for rel in files):
            raise ConfigError(
                file,
                key,
                f"{pattern!r} matches no file of repo/",
                "declare only files the start has: grading puts them back from repo/",
            )
