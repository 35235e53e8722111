"""The sha256 of a file, or of a folder as its committed files: what the claims engine records for
each input and what `ssw bench validate` records for each task folder, so the two agree.

A folder's hash is the sha256 of one line per file, `<relative path>\\0<sha256 of its bytes>\\n`, in
path order, over the files git would commit (tracked, or untracked and not ignored; every file
outside a git checkout), caches and build output left out."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.util.git import run_git

# Caches and build output inside an evidence folder say nothing about the evidence.
SKIPPED = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv", ".git", ".DS_Store"}
)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _ls_files(cwd: Path, *pathspecs: str) -> list[str] | None:
    """git's list of the files under `pathspecs` that it would commit (tracked, or untracked
    and not ignored), relative to `cwd`; None outside a git checkout."""
    try:
        done = run_git(
            cwd,
            *("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *pathspecs),
            user_config=True,
        )
    except UsageError:
        return None
    if done.status != 0:
        return None
    return [name for name in done.out.split("\0") if name]


def _kept(folder: Path, candidates: Iterable[Path]) -> list[Path]:
    """The files a hash covers, in path order. A listed name that is no file (a tracked file
    deleted from disk, a symlink to a folder) drops out."""
    return sorted(
        p
        for p in candidates
        if p.is_file()
        and not any(part in SKIPPED for part in p.relative_to(folder).parts)
        and p.suffix != ".pyc"
    )


def tree_files(folder: Path) -> list[Path]:
    """The files under `folder` a hash covers: in a checkout, git's list of them (a file git
    ignores, a run's ledger, is never evidence); elsewhere every file."""
    listed = _ls_files(folder, ".")
    return _kept(folder, folder.rglob("*") if listed is None else (folder / n for n in listed))


def _listed_together(folders: Sequence[Path]) -> dict[Path, list[Path]]:
    """git's lists of folders that share a parent, from one git call per parent: the same
    lists as one call each would give. A folder that is a repository of its own is left to a
    call of its own (absent here)."""
    by_parent: dict[Path, list[str]] = {}
    for folder in folders:
        if folder.name not in ("", ".", "..") and not (folder / ".git").exists():
            by_parent.setdefault(folder.parent, []).append(folder.name)
    found: dict[Path, list[Path]] = {}
    for parent, names in by_parent.items():
        listed = _ls_files(parent, *(f":(literal){name}" for name in names))
        if listed is None:
            continue
        files: dict[str, list[Path]] = {name: [] for name in names}
        for entry in listed:
            head = entry.split("/", 1)[0]
            if head in files:
                files[head].append(parent / entry)
        found.update({parent / name: paths for name, paths in files.items()})
    return found


def folder_hashes(folders: Sequence[Path]) -> list[str]:
    """`hash_path(folder, ".")` of each folder, with one git call for folders side by side (a
    suite's tasks) instead of one each."""
    listed = _listed_together(folders)
    hashes = []
    for folder in folders:
        files = _kept(folder, listed[folder]) if folder in listed else tree_files(folder)
        hashes.append(tree_hash(folder, _with_bytes(files)))
    return hashes


def _with_bytes(files: list[Path]) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in files]


def read_tree(folder: Path) -> list[tuple[Path, bytes]]:
    """Each file of `tree_files(folder)` with its bytes, read once."""
    return _with_bytes(tree_files(folder))


def tree_hash(folder: Path, files: list[tuple[Path, bytes]]) -> str:
    """A folder's hash from what `read_tree` read of it."""
    lines = [f"{p.relative_to(folder).as_posix()}\0{sha256_bytes(data)}\n" for p, data in files]
    return sha256_bytes("".join(lines).encode())


def hash_path(root: Path, rel: str) -> str:
    """A file's sha256; a folder's is the sha256 of its files' relative paths and sha256s."""
    path = root / rel
    if path.is_file():
        return sha256_bytes(path.read_bytes())
    if path.is_dir():
        return tree_hash(path, read_tree(path))
    raise FileNotFoundError(rel)
