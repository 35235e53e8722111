"""The sha256 of a file, or of a folder as its committed files: what the claims engine records for
each input and what `ssw bench validate` records for each task folder, so the two agree.

A folder's hash is the sha256 of one line per file, `<relative path>\\0<sha256 of its bytes>\\n`, in
path order, over the files git would commit (tracked, or untracked and not ignored; every file
outside a git checkout), caches and build output left out."""

from __future__ import annotations

import hashlib
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.util.git import run_git

# Caches and build output inside an evidence folder say nothing about the evidence.
SKIPPED = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv", ".git", ".DS_Store"}
)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _git_files(folder: Path) -> set[Path] | None:
    """The files below `folder` that git would commit (tracked, or untracked and not ignored);
    None outside a git checkout. A file git ignores (a run's ledger) is never evidence."""
    try:
        done = run_git(
            folder,
            *("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."),
            user_config=True,
        )
    except UsageError:
        return None
    if done.status != 0:
        return None
    return {folder / name for name in done.out.split("\0") if name}


def tree_files(folder: Path) -> list[Path]:
    committed = _git_files(folder)
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and (committed is None or p in committed)
        and not any(part in SKIPPED for part in p.relative_to(folder).parts)
        and p.suffix != ".pyc"
    )


def hash_path(root: Path, rel: str) -> str:
    """A file's sha256; a folder's is the sha256 of its files' relative paths and sha256s."""
    path = root / rel
    if path.is_file():
        return sha256_bytes(path.read_bytes())
    if path.is_dir():
        lines = [
            f"{p.relative_to(path).as_posix()}\0{sha256_bytes(p.read_bytes())}\n"
            for p in tree_files(path)
        ]
        return sha256_bytes("".join(lines).encode())
    raise FileNotFoundError(rel)
