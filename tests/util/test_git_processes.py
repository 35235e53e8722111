"""What a run's work tree costs in git processes (issue 48, ADR 0083): the objects it reads come
through one long-lived `git cat-file --batch`, ended with the tree; git lists the tree again only
when a path it has not seen, or a changed ignore rule, could change its answer; and the listing
it is spared is the one git would give."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest

from stepswitch.agent.workspace.worktree import commit_all, create_worktree, remove_worktree
from stepswitch.util.git_batch import tree_listing
from tests.harness.repo import git, logged_commands, logging_git, write_repo

FILES = {
    ".gitignore": "*.log\nbuild/\n",
    "pkg/mod.py": "X = 1\n",
    "pkg/deep/more.py": "Y = 1\n",
    "tests/test_mod.py": "def test(): pass\n",
}


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log of every git process started from here on (a git on PATH that logs, then runs)."""
    return logging_git(tmp_path, monkeypatch)


def test_steps_that_add_no_path_start_no_git_process(tmp_path: Path, counted: Path):
    repo = write_repo(tmp_path / "repo", FILES, commit=True)
    worktree = create_worktree(repo, "r1")
    tree, wt = worktree.git, worktree.path
    assert tree.changed_paths() == []
    started = logged_commands(counted)

    for step in range(6):  # a step that edits a file the tree already holds: no process
        (wt / "pkg/mod.py").write_text(f"X = {step + 2}\n")
        assert tree.changed_paths() == ["pkg/mod.py"]
    (wt / "pkg/deep/more.py").unlink()
    assert tree.changed_paths() == ["pkg/deep/more.py", "pkg/mod.py"]
    assert logged_commands(counted) == started

    # A new path: the run's one check-ignore is asked about it, no process started.
    (wt / "pkg/new.py").write_text("Z = 1\n")
    (wt / "out.log").write_text("ignored\n")
    assert tree.changed_paths() == ["pkg/deep/more.py", "pkg/mod.py", "pkg/new.py"]
    assert tree.changed_paths() == ["pkg/deep/more.py", "pkg/mod.py", "pkg/new.py"]
    assert logged_commands(counted) == started

    (wt / ".gitignore").write_text("*.log\n")  # a rule changed: build/ is listed again
    (wt / "build").mkdir()
    (wt / "build/x.py").write_text("")
    assert "build/x.py" in tree.changed_paths()
    assert logged_commands(counted) - started == Counter({"check-ignore": 1})  # a fresh checker
    remove_worktree(worktree)


def test_a_listing_spared_is_the_one_git_gives(tmp_path: Path, counted: Path):
    repo = write_repo(tmp_path / "repo", FILES, commit=True)
    worktree = create_worktree(repo, "r1")
    tree, wt = worktree.git, worktree.path
    (wt / "build").mkdir()
    (wt / "build/made.py").write_text("")
    (wt / "pkg/made.log").write_text("")
    first = tree.listed_paths()
    changes = [
        lambda: (wt / "pkg/mod.py").write_text("X = 9\n"),
        lambda: (wt / "build/made.py").unlink(),
        lambda: (wt / "pkg/made.log").unlink(),
        lambda: (wt / "tests/test_mod.py").unlink(),
    ]
    for change in changes:
        change()
        assert tree.listed_paths() == tree._ls_files()
    assert first[0] - tree.listed_paths()[0] == {"tests/test_mod.py"}
    assert logged_commands(counted)["ls-files"] == len(changes)  # only the comparisons' own
    remove_worktree(worktree)


def test_the_base_commits_objects_come_through_one_git_that_ends_with_the_tree(
    tmp_path: Path, counted: Path
):
    repo = write_repo(tmp_path / "repo", FILES, commit=True)
    before = logged_commands(counted)
    worktree = create_worktree(repo, "r1")
    (worktree.path / "pkg/mod.py").write_text("X = 2\n")
    reader = worktree.git.reader()
    assert reader.running
    commit = commit_all(worktree, "change\n")
    calls = logged_commands(counted) - before

    assert commit is not None and git(repo, "show", f"{commit}:pkg/mod.py") == "X = 2\n"
    assert git(repo, "rev-parse", "ssw/r1").strip() == commit
    # One cat-file for every object; the branch's commit is the one ssw set, not asked again
    # (the one rev-parse finds the checkout).
    assert calls["cat-file"] == 1 and "ls-tree" not in calls and calls["rev-parse"] == 1
    # The commit object is ssw's (ADR 0089): git only makes the branch and moves it.
    assert "commit-tree" not in calls and calls["update-ref"] == 2
    remove_worktree(worktree)
    assert not reader.running


def test_a_commit_on_a_branch_moved_meanwhile_goes_on_top_of_it(tmp_path: Path):
    repo = write_repo(tmp_path / "repo", FILES, commit=True)
    worktree = create_worktree(repo, "r1")
    (worktree.path / "pkg/mod.py").write_text("X = 2\n")
    git(repo, "branch", "-f", "ssw/r1", git(repo, "commit-tree", "-p", "HEAD", "-m", "other",
                                            "HEAD^{tree}").strip())  # fmt: skip
    moved = git(repo, "rev-parse", "ssw/r1").strip()

    commit = commit_all(worktree, "change\n")

    assert commit is not None and git(repo, "rev-parse", f"{commit}^").strip() == moved
    remove_worktree(worktree)


def test_trees_read_through_the_reader_list_as_git_ls_tree_lists_them(tmp_path: Path):
    repo = write_repo(tmp_path / "repo", FILES, commit=True)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("pkg/mod.py")
    git(repo, "add", "-A")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{'a' * 40},vendor/sub")
    git(repo, "commit", "-qm", "more")
    worktree = create_worktree(repo, "r1")

    for spec in ("HEAD", "HEAD:pkg", "HEAD^"):
        want = subprocess.run(
            ["git", "ls-tree", "-r", "-t", "-z", "--full-tree", spec],
            cwd=repo, capture_output=True, check=True,
        ).stdout  # fmt: skip
        assert tree_listing(worktree.git.reader(), spec, sha256=False) == want
    remove_worktree(worktree)


def test_the_same_diff_asked_again_starts_no_second_git(tmp_path: Path, counted: Path):
    repo = write_repo(tmp_path / "repo", FILES, commit=True)
    worktree = create_worktree(repo, "r1")
    (worktree.path / "pkg/mod.py").write_text("X = 2\n")
    first = worktree.git.diff()
    (worktree.path / "pkg/mod.py").write_text("X = 3\n")
    second = worktree.git.diff()

    assert "+X = 2" in first and "+X = 3" in second
    assert worktree.git.diff() == second
    assert logged_commands(counted)["diff-tree"] == 1  # the run's one (ADR 0092)
    assert logged_commands(counted)["diff"] == 0
    remove_worktree(worktree)
