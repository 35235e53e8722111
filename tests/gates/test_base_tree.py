"""Reads of the base commit (gates/base.py): what git says of an object id is kept for the gate
run, what it says of a name is asked again, since a branch moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.gates.base import BaseTree, BaseUnreadable
from tests.harness.repo import git, write_repo


def _commit(root: Path, rel: str, text: str) -> str:
    (root / rel).write_text(text)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", rel)
    return git(root, "rev-parse", "HEAD").strip()


def test_a_branch_that_moves_is_read_anew_and_each_commit_keeps_its_files(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", {"calc.py": "X = 1\n"}, commit=True)
    branch = git(root, "branch", "--show-current").strip()
    base = BaseTree.find(root)
    assert base is not None
    first = base.commit("HEAD")
    assert base.commit(branch) == first
    assert base.text(first, "calc.py") == "X = 1\n"
    second = _commit(root, "calc.py", "X = 2\n")
    assert base.commit(branch) == second  # not the answer kept from before it moved
    assert base.commit("HEAD") == first  # the run's base commit, fixed when it started
    assert (base.text(first, "calc.py"), base.text(second, "calc.py")) == ("X = 1\n", "X = 2\n")
    assert base.text(first, "calc.py") == "X = 1\n"  # read again: the same bytes
    with pytest.raises(BaseUnreadable, match="no such commit"):
        base.commit("0" * 40)
