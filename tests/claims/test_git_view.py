"""The committed versions of a file the claims engine reads (GitView.versions) are what `git show
COMMIT:./PATH` prints of each, newest first, whatever the file went through: edited, deleted and
added again, bytes that are not UTF-8, blank lines at its ends, a name with spaces, a folder."""

from __future__ import annotations

from pathlib import Path

from stepswitch.claims.git_view import GitView
from stepswitch.util.git import git_answer
from tests.harness.repo import commit_all, git, write_repo


def test_each_committed_version_is_what_git_show_prints_of_it(tmp_path: Path):
    root = write_repo(tmp_path / "r", {"notes/a b.txt": "first\n", "log.json": "{}"}, commit=True)
    steps: list[dict[str, bytes | None]] = [
        {"notes/a b.txt": b"\n  second, indented  \n\n", "log.json": b'{"n": 1}\n'},
        {"notes/a b.txt": None, "log.json": b"caf\xe9 \xff not utf-8\n"},  # deleted
        {"notes/a b.txt": b"third\r\n", "notes/more.txt": b"in the folder\n"},  # back again
    ]
    for files in steps:
        for rel, data in files.items():
            if data is None:
                (root / rel).unlink()
            else:
                (root / rel).write_bytes(data)
        commit_all(root, "change")
    view = GitView(root)

    for rel in ("notes/a b.txt", "log.json", "notes", "never.txt"):
        commits = git(root, "log", "--format=%H", "--", rel).split()
        expected = [
            (commit, text)
            for commit in commits
            if (text := git_answer(root, "show", f"{commit}:./{rel}")) is not None
        ]
        assert view.versions(rel) == expected, rel
    assert [text for _, text in view.versions("notes/a b.txt")] == [
        "third",
        "second, indented",
        "first",
    ]  # the deleting commit has no version; each stripped as git_answer strips
