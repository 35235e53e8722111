"""The listing a run's one `git check-ignore` gives for new paths is the one `git ls-files
--others --exclude-standard` gives (issue 48, ADR 0090), whatever the agent names or writes."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stepswitch.agent.workspace.worktree import (
    Worktree,
    commit_all,
    create_worktree,
    remove_worktree,
)
from stepswitch.util import git_config_files
from tests.harness.repo import git, logged_commands, logging_git, write_repo

FILES = {
    ".gitignore": "*.log\n!keep.log\nbuild/\nout/\n!out/kept.py\n",
    "pkg/mod.py": "X = 1\n",
    "pkg/deep/more.py": "Y = 1\n",
}
USER_IGNORES = "token.secret\n*.env\n"  # the user's own excludes file, outside the repository


@pytest.fixture
def worktree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Worktree]:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text(USER_IGNORES)  # git's default place
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    made = create_worktree(write_repo(tmp_path / "repo", FILES, commit=True), "r1")
    made.git.listed_paths()  # the run's first listing: the checker has read the rules
    yield made
    if made.path.exists():
        remove_worktree(made)


def _write(root: Path, path: str | bytes, text: str = "") -> None:
    full = os.path.join(os.fsencode(root), os.fsencode(path))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as handle:
        handle.write(text)


def _replace_by_folder(root: Path) -> None:
    (root / "pkg/mod.py").unlink()
    _write(root, "pkg/mod.py/inside.py")


SHAPES: dict[str, Callable[[Path], None]] = {
    "paths in new folders": lambda r: [_write(r, p) for p in ("a/b/c.py", "build/x.py", "a/x.log")],
    "negated patterns": lambda r: [_write(r, p) for p in ("keep.log", "out/kept.py", "out/x.py")],
    "a file where a folder pattern is": lambda r: _write(r, "pkg/build"),
    "a file replaced by a folder": _replace_by_folder,
    "the user's excludes file": lambda r: [_write(r, p) for p in ("token.secret", "a/b.env")],
    "a new .gitignore": lambda r: [_write(r, "pkg/.gitignore", "*.py\n"), _write(r, "pkg/n.py")],
    "names git could read otherwise": lambda r: (
        [
            _write(r, p)
            for p in (":token.secret", ":!x.py", ":(top)y", "-n", "sp ace", "a\nb", "[ab].py", "*")
        ]
        + [_write(r, b"pkg/\xff\xfe.py")]
    ),
    "a nested repository": lambda r: [_write(r, "vendor/lib/f"), git(r / "vendor/lib", "init")],
}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_checkers_listing_is_git_ls_files(worktree: Worktree, shape: str):
    SHAPES[shape](worktree.path)
    assert worktree.git.listed_paths() == worktree.git._ls_files()


def test_new_paths_start_no_process_and_changed_rules_a_fresh_checker(
    worktree: Worktree, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    counted = logging_git(tmp_path, monkeypatch)
    tree = worktree.git
    checker = tree._listing.checker
    assert checker is not None and checker.running
    for step in range(3):
        _write(worktree.path, f"new/{step}.py")
        assert f"new/{step}.py" in tree.listed_paths()[0]
    assert counted.read_text() == ""

    _write(worktree.path, "new/.gitignore", "1.py\n")  # a rule git may have read: a new checker
    assert "new/1.py" not in tree.listed_paths()[0]
    assert logged_commands(counted) == Counter({"check-ignore": 1})
    remove_worktree(worktree)
    assert not checker.running  # nothing left running once the tree is left


def test_the_agent_can_neither_commit_what_the_user_ignores_nor_hide_a_file(
    worktree: Worktree,
):
    root, tree = worktree.path, worktree.git
    for path in ("token.secret", "deep/er/token.secret", "x.env"):  # ignored by the user
        _write(root, path, "leaked\n")
    tree.listed_paths()
    # Each alone, so that one git would refuse does not send the others to ls-files.
    for path in (":token.secret", ":!pkg/mod.py", "tok\nen.secret"):  # names to trick git
        _write(root, path, "kept\n")
        assert path in tree.listed_paths()[0]  # in the review's diff as in the commit
    _write(root, "build/made.py")
    assert "build/made.py" not in tree.listed_paths()[0]
    # Rules a running checker read already (the top folder's, when it started; pkg/'s).
    (root / ".gitignore").write_text(FILES[".gitignore"].replace("build/\n", ""))
    _write(root, "pkg/.gitignore", "hidden.py\n")
    _write(root, "pkg/hidden.py")
    _write(root, "pkg/shown.py")
    # Configuration in the tree names nothing: git reads the user's, outside the agent's reach.
    _write(root, ".gitconfig", f"[core]\n\texcludesFile = {root / 'hide.ignore'}\n")
    _write(root, "hide.ignore", "*.py\n")

    commit = commit_all(worktree, "change\n")

    assert commit is not None
    listed = git(worktree.repo, "ls-tree", "-r", "-z", "--name-only", commit)
    committed = set(listed.split("\0")) - {""}
    assert not {"token.secret", "deep/er/token.secret", "x.env", "pkg/hidden.py"} & committed
    assert {":token.secret", ":!pkg/mod.py", "tok\nen.secret"} <= committed
    assert {"build/made.py", "pkg/shown.py"} <= committed


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mine.ignore").write_text("*.secret\n")
    (home / "more.config").write_text(f"[core]\n\texcludesFile = {home / 'mine.ignore'}\n")
    (home / ".gitconfig").write_text(config.format(home=home))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


@pytest.mark.parametrize(
    ("config", "asked"),
    [
        ("[user]\n\tname = someone\n", 0),  # nothing names one: git's default, none here
        ("[core]\n\texcludesFile = {home}/mine.ignore\n", 1),
        ("[include]\n\tpath = {home}/more.config\n", 1),
    ],
)
def test_the_excludes_file_is_asked_of_git_only_when_a_configuration_could_name_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, asked: int
):
    _home(tmp_path, monkeypatch, config)
    monkeypatch.setattr(git_config_files, "_system_files", list)  # this host's aside
    counted = logging_git(tmp_path, monkeypatch)
    worktree = create_worktree(write_repo(tmp_path / "repo", FILES, commit=True), "r1")
    assert "config" not in logged_commands(counted)  # a run's start asks nothing of it
    _write(worktree.path, "a.secret")

    listed = worktree.git.listed_paths()

    assert ("a.secret" in listed[0]) is (asked == 0)
    assert logged_commands(counted)["config"] == asked
    assert listed == worktree.git._ls_files()
    remove_worktree(worktree)
