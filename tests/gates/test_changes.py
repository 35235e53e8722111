from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.cli.gates import gates_command
from stepswitch.errors import UsageError
from stepswitch.gates.changes import changed_since, complete_changes
from stepswitch.util.git_checkouts import checkout_tree
from tests.harness.repo import git, write_repo

TONS = {
    "boltons/__init__.py": "",
    "boltons/mathutils.py": "def clamp(x):\n    return x\n",
    "boltons/other.py": "X = 1\n",
}


def test_a_rename_reports_both_the_old_and_the_new_path(tmp_path: Path) -> None:
    write_repo(tmp_path, TONS, commit=True)
    git(tmp_path, "mv", "boltons/mathutils.py", "boltons/mathtools.py")
    assert changed_since(checkout_tree(tmp_path), "HEAD") == [
        "boltons/mathtools.py",
        "boltons/mathutils.py",
    ]


def test_deleted_and_new_untracked_files_are_reported(tmp_path: Path) -> None:
    write_repo(tmp_path, TONS, commit=True)
    (tmp_path / "boltons" / "other.py").unlink()
    (tmp_path / "boltons" / "new.py").write_text("Y = 2\n")
    (tmp_path / "boltons" / "__pycache__").mkdir()
    (tmp_path / "boltons" / "__pycache__" / "new.cpython-311.pyc").write_bytes(b"")
    assert changed_since(checkout_tree(tmp_path), "HEAD") == ["boltons/new.py", "boltons/other.py"]


def test_a_mangled_path_from_the_caller_is_dropped_and_the_real_ones_added(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, TONS, commit=True)
    git(tmp_path, "mv", "boltons/mathutils.py", "boltons/mathtools.py")
    given = ["boltons/mathtools.py", "tons/mathutils.py"]  # what a bad porcelain parse gives
    assert complete_changes(checkout_tree(tmp_path), given, "HEAD") == [
        "boltons/mathtools.py",
        "boltons/mathutils.py",
    ]


def test_outside_git_the_given_list_is_kept(tmp_path: Path) -> None:
    write_repo(tmp_path, TONS)
    assert complete_changes(checkout_tree(tmp_path), ["boltons/other.py"], "HEAD") == [
        "boltons/other.py"
    ]


@pytest.mark.parametrize("path", ["../x.py", "boltons/../../x.py", "/etc/passwd"])
def test_ssw_gates_refuses_a_changed_path_outside_the_repository(tmp_path: Path, path: str) -> None:
    repo = write_repo(tmp_path / "repo", {**TONS, "tests/test_m.py": "def test_m():\n    pass\n"})
    with pytest.raises(UsageError, match="not inside"):
        gates_command(repo, [path])
