"""A check-out writes a commit's files beneath its folder and nowhere else: a tree anyone can
make with `git mktree` (entries `..`, `.git`, a name twice, a name holding `/`) is refused
before anything is written, and a link in the folder never leads a write out of it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stepswitch.errors import SswError, UnsafeCheckout
from stepswitch.util.git_tree import TreeGit

_ENV = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@l"}
_ENV |= {"GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@l"}


def _git(repo: Path, *args: str, input: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **_ENV}, input=input, capture_output=True,
        check=True,
    )  # fmt: skip
    return done.stdout.decode().strip()


def _blob(repo: Path, data: bytes) -> str:
    return _git(repo, "hash-object", "-w", "--stdin", input=data)


def _tree(repo: Path, *rows: tuple[str, str, str]) -> str:
    """A tree of (mode, object, name) rows, as `git mktree` takes them (it checks no name)."""
    kinds = {"040000": "tree", "160000": "commit"}
    listing = "".join(f"{m} {kinds.get(m, 'blob')} {o}\t{n}\n" for m, o, n in rows)
    return _git(repo, "mktree", input=listing.encode())


def _commit(repo: Path, tree: str) -> str:
    return _git(repo, "commit-tree", tree, "-m", "a tree someone made")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    return repo


def _checkout(repo: Path, tmp_path: Path, commit: str) -> TreeGit:
    """A TreeGit for an empty work tree three folders down, as `ssw run` makes one."""
    work_tree = tmp_path / "a" / "b" / "wt"
    work_tree.mkdir(parents=True)
    return TreeGit(
        git_dir=repo / ".git",
        work_tree=work_tree,
        state=tmp_path / "state",
        branch="refs/heads/work",
        base_commit=commit,
    )


def _evil(repo: Path) -> str:
    """A tree holding evil.txt."""
    return _tree(repo, ("100644", _blob(repo, b"written outside\n"), "evil.txt"))


def test_an_ordinary_nested_tree_checks_out_as_committed(repo: Path, tmp_path: Path):
    inner = _tree(repo, ("100644", _blob(repo, b"X = 1\n"), "mod.py"))
    tree = _tree(
        repo,
        ("040000", _tree(repo, ("040000", inner, "sub")), "pkg"),
        ("100755", _blob(repo, b"#!/bin/sh\n"), "run.sh"),
        ("120000", _blob(repo, b"pkg/sub/mod.py"), "link"),
    )
    checkout = _checkout(repo, tmp_path, _commit(repo, tree))

    checkout.check_out()

    wt = checkout.work_tree
    assert (wt / "pkg" / "sub" / "mod.py").read_text() == "X = 1\n"
    assert os.access(wt / "run.sh", os.X_OK)
    assert os.readlink(wt / "link") == "pkg/sub/mod.py"
    assert checkout.changed_paths() == []


def test_entries_named_dotdot_are_refused_and_nothing_lands_outside(repo: Path, tmp_path: Path):
    climbing = _tree(repo, ("040000", _tree(repo, ("040000", _evil(repo), "..")), ".."))
    commit = _commit(repo, _tree(repo, ("040000", climbing, "..")))
    assert "../../../evil.txt" in _git(repo, "ls-tree", "-r", "--name-only", commit)
    checkout = _checkout(repo, tmp_path, commit)

    with pytest.raises(UnsafeCheckout, match=r"holds the path '\.\.', which git cannot hold"):
        checkout.check_out()

    assert not (tmp_path / "evil.txt").exists()
    assert not any(tmp_path.rglob("evil.txt"))


@pytest.mark.parametrize("name", [".", ".git", ".GIT", ".Git"])
def test_an_entry_git_could_not_hold_is_refused_before_anything_is_written(
    repo: Path, tmp_path: Path, name: str
):
    ordinary = ("100644", _blob(repo, b"fine\n"), "a.txt")  # listed first, yet not written
    commit = _commit(repo, _tree(repo, ordinary, ("040000", _evil(repo), name)))
    checkout = _checkout(repo, tmp_path, commit)

    with pytest.raises(UnsafeCheckout, match=f"the path '{name}', which git cannot hold"):
        checkout.check_out()

    assert not any(tmp_path.rglob("evil.txt")) and not any(tmp_path.rglob("a.txt"))


def test_a_link_and_a_folder_of_one_name_cannot_lead_a_write_through_the_link(
    repo: Path, tmp_path: Path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    link = ("120000", _blob(repo, os.fsencode(outside)), "d")
    commit = _commit(repo, _tree(repo, link, ("040000", _evil(repo), "d")))
    listed = _git(repo, "ls-tree", "-r", commit).splitlines()
    assert [row.split("\t")[1] for row in listed] == ["d", "d/evil.txt"]  # the trap is set
    checkout = _checkout(repo, tmp_path, commit)

    with pytest.raises(UnsafeCheckout, match=r"'d'.*names twice"):
        checkout.check_out()

    assert list(outside.iterdir()) == []


def test_a_name_holding_a_slash_is_refused(repo: Path, tmp_path: Path):
    # `git mktree` refuses such a name; a tree object written as raw bytes holds it all the same.
    blob = _blob(repo, b"x\n")
    raw = b"100644 sub/x.txt\0" + bytes.fromhex(blob)
    tree = _git(repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", input=raw)
    checkout = _checkout(repo, tmp_path, _commit(repo, tree))

    with pytest.raises(UnsafeCheckout, match=r"'sub/x\.txt'.*holding '/'"):
        checkout.check_out()

    assert list(checkout.work_tree.iterdir()) == []


def test_a_link_already_in_the_folder_is_not_followed_by_a_write(repo: Path, tmp_path: Path):
    commit = _commit(repo, _tree(repo, ("040000", _evil(repo), "pkg")))
    outside = tmp_path / "outside"
    outside.mkdir()
    checkout = _checkout(repo, tmp_path, commit)
    dest = tmp_path / "copy"
    dest.mkdir()
    (dest / "pkg").symlink_to(outside)  # what a sandboxed process could leave in a folder

    with pytest.raises(UnsafeCheckout, match=r"'pkg/evil\.txt' would be written through a link"):
        checkout.check_out(commit, dest)

    assert list(outside.iterdir()) == []


def test_a_git_file_entry_pointing_elsewhere_is_refused(repo: Path, tmp_path: Path):
    gitfile = ("100644", _blob(repo, b"gitdir: ../../elsewhere\n"), ".git")
    commit = _commit(repo, _tree(repo, gitfile))
    checkout = _checkout(repo, tmp_path, commit)

    with pytest.raises(UnsafeCheckout, match=r"the path '\.git', which git cannot hold"):
        checkout.check_out()

    assert list(checkout.work_tree.iterdir()) == []


def test_an_entry_with_an_empty_name_writes_nothing(repo: Path, tmp_path: Path):
    commit = _commit(repo, _tree(repo, ("040000", _evil(repo), "")))  # `git mktree` takes it
    checkout = _checkout(repo, tmp_path, commit)

    with pytest.raises(SswError, match="empty filename"):  # git itself will not list it
        checkout.check_out()

    assert not any(tmp_path.rglob("evil.txt"))
