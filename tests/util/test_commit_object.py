"""The run's commit written by ssw is the one `git commit-tree` writes: the same bytes, so the
same id, in SHA-1 and SHA-256 repositories; where git would write other bytes (a message it
rewrites, an identity it trims, a configuration that adds a header) git writes it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from stepswitch.util.commit_object import (
    Signature,
    commit_body,
    config_asks_nothing,
    signature_at,
    write_commit,
)
from stepswitch.util.loose_objects import LooseObjects
from tests.harness.repo import GIT_ENV, git, write_repo

MESSAGES = [
    b"Fix mean\n\nDivide by the count.\n\nSsw-Run: r1\n",
    b"no newline at the end",
    "caf\u00e9 \u2192 \U0001f600\n".encode(),
    b"",
    b"\n\n  spaces and blank lines kept  \n\n",
]
REWRITTEN = [b"latin-1 caf\xe9\n", "a noncharacter \ufdd0\n".encode(), "\uffff\n".encode()]


def _commit_tree(repo: Path, parents: list[str], message: bytes, sig: Signature) -> bytes:
    date = " ".join(sig.line().decode().split()[-2:])  # "<when> <+hhmm>", git's own form
    env = {
        "GIT_AUTHOR_NAME": sig.name,
        "GIT_AUTHOR_EMAIL": sig.email,
        "GIT_COMMITTER_NAME": sig.name,
        "GIT_COMMITTER_EMAIL": sig.email,
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
    }
    args = [a for p in parents for a in ("-p", p)]
    done = subprocess.run(
        ["git", "commit-tree", "HEAD^{tree}", *args, "-F", "-"],
        cwd=repo,
        input=message,
        env={**os.environ, **GIT_ENV, **env},
        capture_output=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_a_commit_written_without_git_has_the_id_commit_tree_gives(tmp_path, object_format):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", f"--object-format={object_format}")
    write_repo(repo, {"a.txt": "x\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    head = git(repo, "rev-parse", "HEAD").strip()
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    objects = LooseObjects(repo / ".git", sha256=object_format == "sha256")
    signatures = [
        Signature("Stepswitch", "ssw@localhost", 1_700_000_000, 0),
        Signature("A. Person", "a@example.com", 1_700_000_123, 5 * 60 + 30),
        Signature("Someone Else", "s@x", 1_000_000_000, -(9 * 60 + 30)),
    ]
    for parents in ([head], [], [head, head]):
        for sig in signatures:
            for message in MESSAGES:
                body = commit_body(tree, tuple(parents), sig, sig, message)
                assert body is not None
                written = objects.write(b"commit", body)
                assert written.encode() == _commit_tree(repo, parents, message, sig)
    for message in REWRITTEN:  # git stores other bytes than it was given: git writes these
        assert commit_body(tree, (head,), signatures[0], signatures[0], message) is None
        stored = git(repo, "cat-file", "commit", _commit_tree(repo, [head], message,
                                                              signatures[0]).decode())  # fmt: skip
        assert not stored.endswith(message.decode("utf-8", "replace"))
    git(repo, "fsck", "--strict", "--no-dangling")


@pytest.mark.parametrize("name", [" Stepswitch", "Stepswitch.", "a <b>", "", "x\ny"])
def test_an_identity_git_would_trim_is_left_to_git(name):
    sig = Signature(name, "ssw@localhost", 0, 0)
    assert commit_body("0" * 40, (), sig, sig, b"m\n") is None


@pytest.mark.parametrize(
    "tz", ["UTC0", "IST-5:30", "NST3:30", "XX-0:20:30", "YY0:20:30", "EST5EDT,M3.2.0,M11.1.0"]
)
def test_the_local_offset_is_the_one_git_writes(tmp_path, monkeypatch, tz):
    repo = write_repo(tmp_path / "repo", {"a.txt": "x\n"}, commit=True)
    monkeypatch.setenv("TZ", tz)
    try:
        time.tzset()
        made = git(repo, "commit-tree", "HEAD^{tree}", "-m", "now").strip()
        line = next(r for r in git(repo, "cat-file", "commit", made).splitlines() if
                    r.startswith("committer "))  # fmt: skip
        when = int(line.split()[-2])
        assert b"committer " + signature_at("user", "user@localhost", when).line() == (
            line.encode()
        )
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_configuration_that_changes_the_commit_leaves_it_to_git(tmp_path):
    repo = write_repo(tmp_path / "repo", {"a.txt": "x\n"}, commit=True)
    assert config_asks_nothing(repo / ".git")
    git(repo, "config", "i18n.commitEncoding", "ISO-8859-1")
    assert not config_asks_nothing(repo / ".git")
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    objects = LooseObjects(repo / ".git", sha256=False)

    made = write_commit(repo, repo / ".git", objects, b"m\n", ("ssw", "s@x"), tree, ())

    assert "\nencoding ISO-8859-1\n" in git(repo, "cat-file", "commit", made)
