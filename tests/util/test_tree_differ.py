"""The review's diff comes from the run's one `git diff-tree --stdin` (ADR 0092): byte for byte
the patch `git diff` gives between the same two trees, on every shape of change, in a folder of a
checkout, in a SHA-256 repository, whatever the patch holds; one process for every diff of a run,
and one started again after it died."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stepswitch.agent.workspace.worktree import create_worktree, remove_worktree
from stepswitch.errors import GitFailed
from stepswitch.util.git_checkouts import checkout_tree
from stepswitch.util.git_tree import TreeGit
from tests.harness.repo import GIT_ENV, git, logged_commands, logging_git, write_repo
from tests.harness.shapes import SHAPES_BASE, change_every_way, write_shapes_base


def _git_diff(repo: Path, base: str, tree: str, *args: str) -> bytes:
    """`git diff` between two trees as a user runs it, with no configuration of their own."""
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    argv = ["git", "diff", "--no-ext-diff", "--no-textconv", "--no-color", *args, base, tree, "--"]
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, check=True).stdout


def _diff_of(tree: TreeGit) -> tuple[str, bytes]:
    """The tree as it is now, and the review's diff of it."""
    return tree.write_tree()[0], tree.diff().encode("utf-8", "surrogateescape")


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_the_reviews_diff_is_git_diffs_on_every_shape(tmp_path: Path, object_format: str):
    repo = write_shapes_base(tmp_path / "repo")
    git(repo, "init", "-q", f"--object-format={object_format}")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    worktree = create_worktree(repo, "r1")
    change_every_way(worktree.path)

    tree, patch = _diff_of(worktree.git)

    assert patch == _git_diff(repo, worktree.base_commit, tree)
    assert b"rename from old_name.py" in patch and b"Binary files" in patch
    remove_worktree(worktree)


def test_in_a_folder_of_a_checkout_the_diff_is_git_diffs_relative_to_it(tmp_path: Path):
    repo = write_repo(tmp_path / "repo", SHAPES_BASE, commit=True)
    (repo / "sub/deep/x.txt").write_text("x\nz\n")
    (repo / "sub/new.txt").write_text("n\n")
    (repo / "edit.py").write_text("outside the folder\n")
    tree = checkout_tree(repo / "sub")
    assert tree is not None and tree.prefix == "sub/"

    written, patch = _diff_of(tree)

    assert patch == _git_diff(repo, tree.base_commit, written, "--relative=sub")
    assert b"a/deep/x.txt" in patch and b"edit.py" not in patch
    tree.close()


def test_a_patch_holding_the_end_mark_or_larger_than_a_pipe_is_read_whole(tmp_path: Path):
    repo = write_repo(tmp_path / "repo", {"a.txt": "a\n"}, commit=True)
    worktree = create_worktree(repo, "r1")
    # The mark that ends an answer, as a line of a file and in a file's name (git quotes it).
    (worktree.path / "a.txt").write_text("a\nssw-end-of-patch\n")
    (worktree.path / "name\nssw-end-of-patch").write_text("ssw-end-of-patch\n")
    (worktree.path / "big.txt").write_text("".join(f"row {n}\n" for n in range(200_000)))

    tree, patch = _diff_of(worktree.git)

    assert patch == _git_diff(repo, worktree.base_commit, tree)
    assert patch.count(b"+ssw-end-of-patch\n") == 2 and len(patch) > 1 << 20
    remove_worktree(worktree)


def test_every_diff_of_a_run_asks_one_process_and_one_that_died_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    log = logging_git(tmp_path, monkeypatch)
    repo = write_repo(tmp_path / "repo", {"a.py": "x = 1\n"}, commit=True)
    worktree = create_worktree(repo, "r1")
    tree = worktree.git
    patches = []
    for n in range(2, 5):
        (worktree.path / "a.py").write_text(f"x = {n}\n")
        patches.append(tree.diff())
    assert [f"+x = {n}" in p for n, p in zip(range(2, 5), patches, strict=True)] == [True] * 3
    assert logged_commands(log)["diff-tree"] == 1 and logged_commands(log)["diff"] == 0

    differ = tree._differ
    assert differ is not None and differ._proc is not None
    differ._proc.kill()  # the process died between two reviews
    differ._proc.wait()
    (worktree.path / "a.py").write_text("x = 9\n")
    assert "+x = 9" in tree.diff()
    assert logged_commands(log)["diff-tree"] == 2
    remove_worktree(worktree)
    assert not differ.running  # ended with the tree


def test_a_tree_git_cannot_read_is_an_error_not_an_empty_diff(tmp_path: Path):
    repo = write_repo(tmp_path / "repo", {"a.py": "x = 1\n"}, commit=True)
    worktree = create_worktree(repo, "r1")
    differ = worktree.git._differ_started()
    missing = "1" * 40

    with pytest.raises(GitFailed, match="could not compare"):
        differ.patch(missing, missing)
    (worktree.path / "a.py").write_text("x = 2\n")
    assert "+x = 2" in worktree.git.diff()  # the next question is answered
    remove_worktree(worktree)


def test_the_agents_attributes_cannot_hide_a_change_from_the_review(tmp_path: Path):
    repo = write_repo(tmp_path / "repo", {"a.py": "x = 1\n"}, commit=True)
    worktree = create_worktree(repo, "r1")
    (worktree.path / ".gitattributes").write_text("*.py -diff\n")  # "show no patch for it"
    (worktree.path / "a.py").write_text("x = 2  # hidden?\n")

    _, patch = _diff_of(worktree.git)

    assert b"+x = 2  # hidden?" in patch and b"Binary files" not in patch
    # The control: a checkout whose work tree holds those attributes, git diff there hides it.
    control = write_repo(tmp_path / "control", {"a.py": "x = 1\n"}, commit=True)
    (control / ".gitattributes").write_text("*.py -diff\n")
    (control / "a.py").write_text("x = 2  # hidden?\n")
    git(control, "add", "-A")
    shown = _git_diff(control, "HEAD", git(control, "write-tree").strip())
    assert b"Binary files a/a.py and b/a.py differ" in shown
    remove_worktree(worktree)
