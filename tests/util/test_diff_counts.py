"""Line counts taken from a review's diff are the ones `git diff --numstat --no-renames` gives,
on every shape of change; a diff they cannot be read from (a rename git found) leaves the counts
to git; and the run's counts come from the review's diff only when it is of the committed tree,
so no edit after the review can make them stale."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from stepswitch.agent.workspace.worktree import (
    commit_all,
    create_worktree,
    diff_stats,
    remove_worktree,
)
from stepswitch.util.diff_counts import numstat
from tests.harness.repo import GIT_ENV, git, logging_git, write_repo
from tests.harness.shapes import change_every_way, write_shapes_base

DIFF = ("diff", "--no-ext-diff", "--no-textconv", "--no-color")  # as TreeGit.diff runs it


def _git(repo: Path, *args: str) -> bytes:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True).stdout


def _numstat(repo: Path, base: str, head: str) -> list[tuple[str, int | None, int | None]]:
    out = _git(repo, "diff", "--numstat", "-z", "--no-renames", base, head, "--")
    rows = []
    for row in out.decode("utf-8", "surrogateescape").split("\0"):
        if row:
            added, deleted, name = row.split("\t", 2)
            rows.append((name, None if added == "-" else int(added),
                         None if deleted == "-" else int(deleted)))  # fmt: skip
    return rows


@pytest.fixture
def shapes(tmp_path: Path) -> tuple[Path, str, str]:
    """A repository whose second commit changes files in every way numstat tells apart."""
    repo = write_shapes_base(tmp_path / "repo")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    change_every_way(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change")
    return repo, base, git(repo, "rev-parse", "HEAD").strip()


def test_counts_from_a_diff_are_git_numstats_on_every_shape(shapes):
    repo, base, head = shapes
    patch = _git(repo, *DIFF, "--no-renames", base, head, "--").decode("utf-8", "surrogateescape")

    assert numstat(patch) == _numstat(repo, base, head)
    assert ("old_name.py", 0, 20) in _numstat(repo, base, head)  # a rename: deleted, added


def test_a_diff_that_shows_a_rename_or_a_type_change_leaves_the_counts_to_git(shapes):
    repo, base, head = shapes
    patch = _git(repo, *DIFF, "-M", base, head, "--").decode("utf-8", "surrogateescape")
    assert "rename from old_name.py" in patch
    assert numstat(patch) is None

    (repo / "link").write_text("edit.py")  # a file, then a link holding the same text
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a file")
    (repo / "link").unlink()
    (repo / "link").symlink_to("edit.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link")
    patch = _git(repo, *DIFF, "HEAD^", "HEAD", "--").decode("utf-8", "surrogateescape")
    assert patch.count("diff --git a/link b/link") == 2
    assert _numstat(repo, "HEAD^", "HEAD") == [("link", 0, 0)]
    assert numstat(patch) is None


def test_the_runs_counts_come_from_the_review_of_the_committed_tree_alone(tmp_path, monkeypatch):
    log = logging_git(tmp_path, monkeypatch)
    repo = write_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"}, commit=True)
    worktree = create_worktree(repo, "r1")
    tree = worktree.git
    (worktree.path / "a.py").write_text("x = 2\n")
    reviewed = tree.diff()  # the review's diff of this tree: kept
    commit = commit_all(worktree, "change\n")
    assert commit is not None and "+x = 2" in reviewed

    calls = Counter(line.split()[-1] for line in log.read_text().splitlines())
    assert diff_stats(tree, commit) == [("a.py", 1, 1)]
    assert Counter(line.split()[-1] for line in log.read_text().splitlines()) == calls

    # An edit after the review: the committed tree is not the reviewed one, git counts it.
    (worktree.path / "b.py").write_text("y = 2\ny = 3\n")
    later = commit_all(worktree, "more\n")
    assert later is not None
    assert diff_stats(tree, later) == [("a.py", 1, 1), ("b.py", 2, 1)]
    remove_worktree(worktree)
