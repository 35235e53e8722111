"""Trees and blobs ssw writes itself are the ones git writes: the same ids, and git reads them."""

from __future__ import annotations

import os

import pytest

from stepswitch.errors import GitFailed
from stepswitch.util.git_objects import TreeEntry
from stepswitch.util.loose_objects import LooseObjects, plain_path
from tests.harness.repo import git, write_repo

FILES = {
    "a": "x\n",
    "a.txt": "y\n",
    "a-b/c.py": "z\n",
    "a0/deep/er/file.md": "deep\n",
    ".github/workflows/ci.yml": "on: push\n",
    ".gitignore": "*.log\n",
    "empty": "",
    "run.sh": "#!/bin/sh\n",
}


def test_a_tree_written_without_git_is_the_one_git_writes(tmp_path):
    repo = write_repo(tmp_path / "repo", FILES)
    (repo / "run.sh").chmod(0o755)
    os.symlink("a.txt", repo / "link")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    want = git(repo, "write-tree").strip()
    entries = {}
    for row in git(repo, "ls-files", "-s").splitlines():
        meta, path = row.split("\t")
        mode, oid, _ = meta.split()
        entries[path] = TreeEntry(mode, oid)
    store = tmp_path / "store.git"
    git(tmp_path, "init", "-q", "--bare", str(store))
    objects = LooseObjects(store, sha256=False)
    for path in FILES:
        objects.write(b"blob", (repo / path).read_bytes())
    objects.write(b"blob", b"a.txt")  # the link's target

    assert all(plain_path(p, e.mode) for p, e in entries.items())
    assert objects.write_tree(entries) == want
    git(store, "fsck", "--strict", "--no-dangling")  # every object whole, as git would write it
    assert git(store, "ls-tree", "-r", "--name-only", want).split() == sorted(
        [*FILES, "link"], key=lambda p: p.encode()
    )


@pytest.mark.parametrize(
    ("path", "mode"),
    [
        (".GIT/config", "100644"),
        ("git~1/config", "100644"),
        ("a/.git./x", "100644"),
        ("name ", "100644"),
        ("stream:x", "100644"),
        (".gitmodules", "120000"),
        ("caf\u00e9", "100644"),
        ("a/../b", "100644"),
    ],
)
def test_names_git_may_refuse_go_through_git(path, mode):
    assert not plain_path(path, mode)


def test_a_gitmodules_file_is_plain_and_a_link_so_named_is_not():
    assert plain_path(".gitmodules", "100644")
    assert not plain_path("sub/.GITMODULES", "120000")


def test_a_store_the_file_system_refuses_is_a_git_failure_naming_no_path(tmp_path):
    (tmp_path / "not-a-folder").write_text("")
    objects = LooseObjects(tmp_path / "not-a-folder", sha256=False)
    with pytest.raises(GitFailed, match="Not a directory") as raised:
        objects.write(b"blob", b"data")
    assert str(tmp_path) not in str(raised.value)
