"""A folder's hash (util/hashing.py): many folders side by side hashed from one git listing give
what hashing each on its own gives."""

from __future__ import annotations

import subprocess
from pathlib import Path

from stepswitch.util.hashing import folder_hashes, hash_path


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _folders(parent: Path) -> list[Path]:
    """Tasks beside each other, named as globs would match each other, one with files that are
    tracked, untracked, ignored, cached and deleted from disk."""
    _files(
        parent,
        {
            "a/task.toml": "a",
            "a/start/calc.py": "x = 1\n",
            "a/ledger.db": "ignored",
            "a/__pycache__/calc.cpython-311.pyc": "cache",
            "a/gone.txt": "tracked, then deleted",
            "[a]*/task.toml": "glob-like name",
            "ab/task.toml": "ab",
            "empty/.gitignore": "*\n",
        },
    )
    return [parent / name for name in ("a", "[a]*", "ab", "empty")]


def test_folders_listed_together_hash_as_each_alone_in_a_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    folders = _folders(root / "suite" / "tasks")
    (root / ".gitignore").write_text("*.db\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@l", "commit", "-qm", "tasks")
    (folders[0] / "gone.txt").unlink()
    (folders[0] / "untracked.py").write_text("new\n")
    (folders[2] / "later.txt").write_text("untracked too\n")
    alone = [hash_path(folder, ".") for folder in folders]
    assert folder_hashes(folders) == alone
    assert len(set(alone)) == len(alone)  # each folder's own files, none of its neighbours'


def test_a_folder_that_is_a_repository_of_its_own_is_listed_by_its_own_git(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    folders = _folders(root)
    _git(root, "init", "-q")
    _git(folders[2], "init", "-q")  # "ab": its own repository inside the outer one
    (folders[2] / "ignored.log").write_text("ignored by its own .gitignore\n")
    (folders[2] / ".gitignore").write_text("*.log\n")
    assert folder_hashes(folders) == [hash_path(folder, ".") for folder in folders]
    without_log = hash_path(folders[2], ".")
    (folders[2] / "ignored.log").unlink()
    assert hash_path(folders[2], ".") == without_log


def test_folders_outside_git_hash_every_file(tmp_path: Path) -> None:
    folders = _folders(tmp_path / "plain")
    hashes = folder_hashes(folders)
    assert hashes == [hash_path(folder, ".") for folder in folders]
    (folders[0] / "ledger.db").unlink()  # outside git nothing is ignored: the hash changes
    assert folder_hashes(folders)[0] != hashes[0]
