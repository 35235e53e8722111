"""A work tree with no git metadata (util/git_tree.py) and the hardened git runner: what the
tree holds is what gets committed, read without following links and without git ever running
something the tree or a repository's configuration names."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stepswitch.util import git_tree
from stepswitch.util.git import run_git
from stepswitch.util.git_objects import MAX_FILE_BYTES
from stepswitch.util.git_tree import TreeGit

AUTHOR = ("t", "t@localhost")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@l"}
    env |= {"GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@l"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True)
    return done.stdout.decode()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("X = 1\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("pkg/mod.py")
    (repo / ".gitignore").write_text("*.log\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    return repo


def _tree(repo: Path, tmp_path: Path) -> TreeGit:
    base = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "branch", "work")
    tree = TreeGit(
        git_dir=repo / ".git",
        work_tree=tmp_path / "wt",
        state=tmp_path / "state",
        branch="refs/heads/work",
        base_commit=base,
    )
    tree.check_out()
    return tree


def _commit(tree: TreeGit) -> tuple[str, list[str]]:
    snapshot, left_out = tree.write_tree()
    return tree.commit("change\n", AUTHOR, snapshot), left_out


def test_the_work_tree_holds_the_commits_files_and_nothing_of_gits(repo: Path, tmp_path: Path):
    tree = _tree(repo, tmp_path)
    wt = tree.work_tree

    assert sorted(p.name for p in wt.iterdir()) == [".gitignore", "link", "pkg", "run.sh"]
    assert (wt / "pkg" / "mod.py").read_text() == "X = 1\n"
    assert os.access(wt / "run.sh", os.X_OK) and os.readlink(wt / "link") == "pkg/mod.py"
    assert tree.changed_paths() == []


def test_edits_new_files_and_deletions_are_committed_on_the_branch(repo: Path, tmp_path: Path):
    tree = _tree(repo, tmp_path)
    wt = tree.work_tree
    (wt / "pkg" / "mod.py").write_text("X = 2\n")
    (wt / "pkg" / "new.py").write_text("Y = 1\n")
    (wt / "run.sh").unlink()
    (wt / "debug.log").write_text("ignored\n")
    (wt / "pkg" / "__pycache__").mkdir()
    (wt / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")

    assert tree.changed_paths() == ["pkg/mod.py", "pkg/new.py", "run.sh"]
    commit, left_out = _commit(tree)

    assert left_out == []
    assert _git(repo, "rev-parse", "work").strip() == commit
    assert _git(repo, "show", "work:pkg/mod.py") == "X = 2\n"
    files = _git(repo, "ls-tree", "-r", "--name-only", "work").split()
    assert files == [".gitignore", "link", "pkg/mod.py", "pkg/new.py"]
    assert _git(repo, "status", "--porcelain") == ""  # the user's checkout is untouched


def test_a_rewrite_that_keeps_size_and_mtime_is_still_seen(repo: Path, tmp_path: Path):
    tree = _tree(repo, tmp_path)
    target = tree.work_tree / "pkg" / "mod.py"
    old = target.stat()
    os.utime(target, ns=(old.st_atime_ns - 10**10, old.st_mtime_ns - 10**10))
    assert tree.changed_paths() == []  # its stamp is now trusted
    stamp = target.stat()

    target.write_text("X = 9\n")  # same size
    os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))

    assert tree.changed_paths() == ["pkg/mod.py"]


def test_nothing_is_read_through_a_folder_swapped_for_a_link(repo: Path, tmp_path: Path):
    tree = _tree(repo, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text("SECRET = 'host file'\n")
    (outside / "extra.py").write_text("SECRET = 'host file'\n")
    pkg = tree.work_tree / "pkg"
    (pkg / "mod.py").unlink()
    pkg.rmdir()
    pkg.symlink_to(outside)

    commit, _ = _commit(tree)

    shown = _git(repo, "show", "--format=", "-p", commit)
    assert "host file" not in shown
    assert _git(repo, "ls-tree", "--format=%(objectmode) %(path)", "work", "pkg") == "120000 pkg\n"


def test_a_file_over_the_size_cap_is_left_out_and_named(repo: Path, tmp_path: Path):
    tree = _tree(repo, tmp_path)
    with (tree.work_tree / "huge.bin").open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used

    _, left_out = _commit(tree)

    assert left_out == ["huge.bin: larger than 100 MiB"]
    assert "huge.bin" not in _git(repo, "ls-tree", "-r", "--name-only", "work")


def test_paths_git_will_not_hold_are_left_out_and_named(repo: Path, tmp_path: Path):
    tree = _tree(repo, tmp_path)
    for bad in ("sub/.git/config", "sub/.GIT/x", "git~1/config"):
        (tree.work_tree / bad).parent.mkdir(parents=True, exist_ok=True)
        (tree.work_tree / bad).write_text("x\n")
    (tree.work_tree / "kept.py").write_text("x\n")

    _, left_out = _commit(tree)

    # git lists no `.git` folder at all; the rest it cannot hold is named.
    assert sorted(line.split(":")[0] for line in left_out) == ["git~1/config", "sub/.GIT/x"]
    assert sorted(tree.write_tree()[1]) == sorted(left_out)  # and named again, unchanged
    committed = _git(repo, "ls-tree", "-r", "--name-only", "work").split()
    assert "kept.py" in committed
    assert [p for p in committed if p.startswith(("sub/", "git~1"))] == []


def test_the_runner_starts_no_fsmonitor_or_hook_a_configuration_names(repo: Path, tmp_path: Path):
    marker = tmp_path / "ran"
    payload = f"echo ran >> {marker}"
    _git(repo, "config", "core.fsmonitor", f"{payload}; true")
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\n{payload}\n")
    hook.chmod(0o755)
    (repo / "pkg" / "mod.py").write_text("X = 3\n")

    for args in (("status", "--porcelain"), ("add", "-A")):
        assert run_git(repo, *args, env={"GIT_DIR": "/elsewhere"}).status == 0
    assert not marker.exists()

    _git(repo, "status", "--porcelain")  # the control: git as it is configured runs them
    assert marker.exists()


def test_a_work_tree_snapshot_and_its_diff_run_no_filter_or_text_conversion(
    repo: Path, tmp_path: Path
):
    # Filters and textconv drivers come from configuration and attributes: the snapshot never
    # lets git read the tree's files, and its diffs are between objects, without textconv.
    marker = tmp_path / "ran"
    payload = f"echo ran >> {marker}"
    _git(repo, "config", "filter.evil.clean", f"{payload}; cat")
    _git(repo, "config", "diff.evil.textconv", f"{payload}; cat")
    tree = _tree(repo, tmp_path)
    (tree.work_tree / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (tree.work_tree / "pkg" / "mod.py").write_text("X = 3\n")

    commit, _ = _commit(tree)
    assert "+X = 3" in tree.diff(against=commit)
    assert not marker.exists()

    # The control: the same attribute in a checkout git adds from runs the filter.
    (repo / ".gitattributes").write_text("* filter=evil\n")
    (repo / "pkg" / "mod.py").write_text("X = 4\n")
    _git(repo, "add", "-A")
    assert marker.exists()


def test_a_fifo_named_gitignore_does_not_hang_the_commit(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # git opens every folder's .gitignore; a FIFO never opens. ssw takes it out (git could not
    # commit it anyway), says so, and lists the tree again.
    monkeypatch.setattr(git_tree, "LIST_TIMEOUT_S", 1.0)
    tree = _tree(repo, tmp_path)
    os.mkfifo(tree.work_tree / "pkg" / ".gitignore")
    (tree.work_tree / "pkg" / "mod.py").write_text("X = 5\n")

    commit, left_out = _commit(tree)

    assert left_out == ["pkg/.gitignore: not a file (git would wait on it for ever); removed"]
    assert _git(repo, "show", f"{commit}:pkg/mod.py") == "X = 5\n"


def test_the_tree_written_again_is_what_the_work_tree_holds_each_time(
    repo: Path, tmp_path: Path
) -> None:
    tree = _tree(repo, tmp_path)
    mod = tree.work_tree / "pkg" / "mod.py"
    first, _ = tree.write_tree()
    assert tree.write_tree()[0] == first  # nothing changed: the same tree
    mod.write_text("X = 2\n")
    second, _ = tree.write_tree()
    shown = _git(repo, "cat-file", "-p", f"{second}:pkg/mod.py")
    assert second != first and shown == "X = 2\n"
    mod.write_text("X = 1\n")
    assert tree.write_tree()[0] == first
