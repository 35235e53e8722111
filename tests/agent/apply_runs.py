"""A run's branch given hostile commits, for the `ssw runs apply` boundary tests: one real
scripted run's repository copied for each test, commits written as raw blobs on its branch (as a
model's worktree commit would be), the user's own commits and ignored files, and plain git as the
control that does the harm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.harness.repo import git
from tests.test_runs_show_apply import finished, head, repo, run_id, ssw

# One scripted run per test module that imports them, a copy of its repository per test.
__all__ = ["finished", "head", "repo", "run_id", "ssw"]

OPS = "calc/ops.py"
SECRET = "API_TOKEN=the user's own\n"
MERGE_AND_PICK = pytest.mark.parametrize(
    "how", [[], ["--cherry-pick"]], ids=["merge", "cherry-pick"]
)


@dataclass(frozen=True)
class Link:
    target: str


@dataclass(frozen=True)
class Gitlink:
    commit: str


Content = bytes | Link | Gitlink | None  # None: the commit deletes the path


def _git_in(repo: Path, *args: str, index: Path, stdin: bytes | None = None) -> str:
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, input=stdin, capture_output=True, check=True
    )
    return done.stdout.decode().strip()


def commit_on_run_branch(
    repo: Path, run_id: str, files: dict[str, Content], *, record_it: bool = True
) -> str:
    """A commit on the run's branch writing `files` as raw blobs (no filter, no attributes), as
    a model's worktree commit would; with `record_it` the run's record names it as its commit."""
    index = repo.parent / f"index-{len(list(repo.parent.iterdir()))}"
    tip = git(repo, "rev-parse", f"ssw/{run_id}").strip()
    _git_in(repo, "read-tree", tip, index=index)
    for path, content in files.items():
        if content is None:
            _git_in(repo, "update-index", "--force-remove", "--", path, index=index)
            continue
        if isinstance(content, Gitlink):
            mode, oid = "160000", content.commit
        else:
            data = content.target.encode() if isinstance(content, Link) else content
            mode = "120000" if isinstance(content, Link) else "100644"
            oid = _git_in(
                repo, "hash-object", "-w", "--no-filters", "--stdin", index=index, stdin=data
            )
        _git_in(repo, "update-index", "--add", "--cacheinfo", f"{mode},{oid},{path}", index=index)
    tree = _git_in(repo, "write-tree", index=index)
    commit = git(repo, "commit-tree", tree, "-p", tip, "-m", "the run's change").strip()
    git(repo, "update-ref", f"refs/heads/ssw/{run_id}", commit)
    if record_it:
        set_record(repo, run_id, commit=commit)
    return commit


def set_record(repo: Path, run_id: str, **fields: object) -> None:
    path = repo / ".ssw" / "runs" / run_id / "run.json"
    record = json.loads(path.read_text())
    record.update(fields)
    path.write_text(json.dumps(record))


def user_commits(repo: Path, files: dict[str, str], message: str = "the user's own") -> None:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-f", *files)
    git(repo, "commit", "-q", "-m", message)


def plain_git_merge(repo: Path, run_id: str, tmp_path: Path) -> Path:
    """The control: the same checkout, copied, merged by git itself (the old `runs apply`)."""
    copy = Path(shutil.copytree(repo, tmp_path / "control", symlinks=True))
    git(copy, "merge", "-q", "--no-ff", "--no-edit", f"ssw/{run_id}")
    return copy


def venv_and_secrets(repo: Path) -> None:
    """What an ordinary checkout holds and ignores: a .env, a data folder, a virtualenv."""
    user_commits(repo, {".gitignore": ".env\ndata/\nenv/\n__pycache__/\n"})
    (repo / ".env").write_text(SECRET)
    (repo / "data").mkdir()
    (repo / "data" / "rows.csv").write_text("1,2\n")
    (repo / "env" / "lib" / "python3.11" / "site-packages").mkdir(parents=True)


def the_ignored_files_are_intact(repo: Path) -> None:
    assert (repo / ".env").read_text() == SECRET
    assert (repo / "data" / "rows.csv").read_text() == "1,2\n"
    assert not (repo / "env" / "lib" / "python3.11" / "site-packages" / "zz.pth").exists()
