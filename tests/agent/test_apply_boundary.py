"""`ssw runs apply` changes nothing it was not asked to: a run's branch given hostile commits
(what a model, or whoever could write the branch, could make), applied as the user applies it,
through the real CLI onto a copy of one real scripted run's repository. Each attack has a control:
plain git on a copy does the harm, or the same change without the hostile bit applies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_runs_show_apply import finished, head, ssw

from .conftest import FIX_LINE, git

__all__ = ["finished"]  # the module's one scripted run, shared with the show/apply tests

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


@pytest.fixture
def repo(finished: tuple[Path, str], tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished[0], tmp_path / "repo", symlinks=True))


@pytest.fixture
def run_id(finished: tuple[Path, str]) -> str:
    return finished[1]


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


# --- what git does not track ---


@MERGE_AND_PICK
def test_apply_refuses_a_change_that_would_write_over_what_the_checkout_ignores(
    repo: Path, run_id: str, tmp_path: Path, how: list[str]
):
    venv_and_secrets(repo)
    commit_on_run_branch(
        repo,
        run_id,
        {
            ".gitignore": b"",
            ".env": b"API_TOKEN=the model's\n",
            "data": b"not a folder\n",
            "env/lib/python3.11/site-packages/zz.pth": b"import os; os.system('id')\n",
        },
    )
    control = plain_git_merge(repo, run_id, tmp_path)
    assert (control / ".env").read_text() == "API_TOKEN=the model's\n"
    assert (control / "data").is_file()
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id, *how)
    forced = ssw(repo, "runs", "apply", run_id, *how, "--force")

    assert result.returncode == 2 and forced.stderr == result.stderr
    assert result.stderr == (
        f"ssw: run {run_id} would write where your checkout has what git does not track: "
        f".env, data/, env/; nothing was changed (fix: move them aside first; `ssw runs show "
        f"{run_id} --diff` shows the change)\n"
    )
    assert head(repo) == before and git(repo, "status", "--porcelain") == ""
    the_ignored_files_are_intact(repo)


def test_a_cherry_pick_of_a_file_added_then_removed_is_judged_commit_by_commit(
    repo: Path, run_id: str
):
    venv_and_secrets(repo)
    commit_on_run_branch(repo, run_id, {".env": b"API_TOKEN=the model's\n"})
    commit_on_run_branch(repo, run_id, {".env": None})  # the branch's whole diff leaves it out

    picked = ssw(repo, "runs", "apply", run_id, "--cherry-pick")

    assert picked.returncode == 2 and "does not track: .env;" in picked.stderr
    assert (repo / ".env").read_text() == SECRET
    merged = ssw(repo, "runs", "apply", run_id)  # the merge writes the end state: no .env
    assert merged.returncode == 0, merged.stderr
    assert (repo / ".env").read_text() == SECRET


def test_a_folder_above_a_written_path_that_is_an_ignored_file_refuses(repo: Path, run_id: str):
    user_commits(repo, {".gitignore": "notes\n"})
    (repo / "notes").write_text("the user's notes\n")
    commit_on_run_branch(repo, run_id, {"notes/todo.py": b"x = 1\n"})

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 2 and "does not track: notes;" in result.stderr
    assert (repo / "notes").read_text() == "the user's notes\n"


def test_a_branch_that_moved_after_its_record_is_judged_by_what_it_now_holds(
    repo: Path, run_id: str
):
    venv_and_secrets(repo)
    judged = git(repo, "rev-parse", f"ssw/{run_id}").strip()
    commit_on_run_branch(repo, run_id, {"calc/extra.py": b"y = 2\n"}, record_it=False)

    moved = ssw(repo, "runs", "apply", run_id)

    assert moved.returncode == 2
    assert f"its branch moved past the commit its gates judged ({judged[:12]} ->" in moved.stderr
    commit_on_run_branch(repo, run_id, {".env": b"API_TOKEN=the model's\n"}, record_it=False)
    forced = ssw(repo, "runs", "apply", run_id, "--force")
    assert forced.returncode == 2 and "does not track: .env;" in forced.stderr
    assert (repo / ".env").read_text() == SECRET


def test_a_change_writing_into_ssws_own_folder_is_refused(repo: Path, run_id: str):
    record = f".ssw/runs/{run_id}/run.json"
    commit_on_run_branch(repo, run_id, {record: b"{}"}, record_it=False)
    set_record(repo, run_id, commit=git(repo, "rev-parse", f"ssw/{run_id}").strip())
    kept = (repo / record).read_text()

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 2 and "does not track: .ssw/;" in result.stderr
    assert (repo / record).read_text() == kept


def test_a_change_of_hundreds_of_files_is_judged_whole(repo: Path, run_id: str):
    venv_and_secrets(repo)
    index = repo.parent / "index-many"
    _git_in(repo, "read-tree", f"ssw/{run_id}", index=index)
    blob = _git_in(repo, "hash-object", "-w", "--stdin", index=index, stdin=b"x = 1\n")
    many = "".join(f"100644 {blob}\tgen/m{i}.py\n" for i in range(400))
    _git_in(repo, "update-index", "--index-info", index=index, stdin=many.encode())
    tip = git(repo, "rev-parse", f"ssw/{run_id}").strip()
    commit = git(
        repo, "commit-tree", _git_in(repo, "write-tree", index=index), "-p", tip, "-m", "m"
    )
    git(repo, "update-ref", f"refs/heads/ssw/{run_id}", commit.strip())
    set_record(repo, run_id, commit=commit.strip())
    applied = Path(shutil.copytree(repo, repo.parent / "applied", symlinks=True))
    commit_on_run_branch(repo, run_id, {"gen/m399.py": b"x = 2\n", ".env": b"X=1\n"})

    refused = ssw(repo, "runs", "apply", run_id)
    done = ssw(applied, "runs", "apply", run_id)  # the control: the same change without .env

    assert refused.returncode == 2 and "does not track: .env;" in refused.stderr
    assert done.returncode == 0, done.stderr
    assert len(list((applied / "gen").iterdir())) == 400


def test_a_file_the_run_turned_into_a_folder_is_applied(repo: Path, run_id: str):
    commit_on_run_branch(repo, run_id, {OPS: None, f"{OPS}/__init__.py": b"x = 1\n"})

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 0, result.stderr
    assert (repo / OPS / "__init__.py").read_bytes() == b"x = 1\n"


def test_deleting_a_tracked_file_under_an_ignored_folder_keeps_what_is_ignored_beside_it(
    repo: Path, run_id: str
):
    user_commits(repo, {".gitignore": "build/\n", "build/keep.txt": "tracked\n"})
    (repo / "build" / "cache.bin").write_bytes(b"the user's cache")
    # The run started after the user's commit, so its branch holds the file it deletes.
    git(repo, "update-ref", f"refs/heads/ssw/{run_id}", head(repo))
    commit_on_run_branch(repo, run_id, {"build/keep.txt": None})

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 0, result.stderr
    assert not (repo / "build" / "keep.txt").exists()
    assert (repo / "build" / "cache.bin").read_bytes() == b"the user's cache"


def test_a_correct_change_on_an_ordinary_python_repository_is_applied(repo: Path, run_id: str):
    user_commits(repo, {".gitignore": "__pycache__/\n*.py[cod]\n.venv/\n.env\n*.egg-info/\n"})
    (repo / ".env").write_text(SECRET)
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "lib" / "site.py").write_text("# the user's venv\n")
    (repo / "calc" / "__pycache__").mkdir(exist_ok=True)
    (repo / "calc" / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"\0")
    (repo / "calc.egg-info").mkdir()
    commit_on_run_branch(
        repo, run_id, {"tests/test_mean_of_one.py": b"def test_one():\n    pass\n"}
    )

    shown = ssw(repo, "runs", "show", run_id)
    result = ssw(repo, "runs", "apply", run_id)

    assert "apply: ok" in shown.stdout.splitlines()
    assert result.returncode == 0, result.stderr
    assert not result.stdout.startswith("--force")
    assert FIX_LINE in (repo / OPS).read_text()
    assert (repo / "tests" / "test_mean_of_one.py").is_file()
    assert (repo / ".env").read_text() == SECRET
    assert (repo / ".venv" / "lib" / "site.py").is_file()
    assert git(repo, "status", "--porcelain") == ""


# --- what --force lifts ---


HOSTILE: dict[str, dict[str, Content]] = {
    "link": {"passwd": Link("/etc/passwd")},
    "submodule": {"vendored": Gitlink("1" * 40)},
    "big file": {"blob.bin": b"\0" * (11 * 2**20)},
    "gitattributes": {".gitattributes": b"*.py ident\n"},
    "nested gitattributes": {"calc/.gitattributes": b"*.py ident\n"},
    "gitattributes in another case": {"calc/.GitAttributes": b"*.py ident\n"},
    "gitmodules": {".gitmodules": b'[submodule "x"]\n\tpath = x\n\turl = ../x\n'},
    "lfsconfig": {".lfsconfig": b"[lfs]\n\turl = http://127.0.0.1:9/\n"},
    "githooks": {".githooks/pre-commit": b"#!/bin/sh\nid\n"},
    "pre-commit config": {".pre-commit-config.yaml": b"repos: []\n"},
    "husky": {"web/.husky/pre-commit": b"#!/bin/sh\nid\n"},
}
SAID = {
    "link": "it adds a link: passwd",
    "submodule": "it adds a submodule: vendored",
    "big file": "blob.bin is 11.0 MB, over the 10 MB limit",
    "gitattributes": "it changes .gitattributes, which git reads as configuration",
    "nested gitattributes": "it changes calc/.gitattributes, which git reads as configuration",
    "gitattributes in another case": "it changes calc/.GitAttributes, which git reads as",
    "gitmodules": "it changes .gitmodules, which git reads as configuration",
    "lfsconfig": "it changes .lfsconfig, which git reads as configuration",
    "githooks": "it changes .githooks/pre-commit, in a hooks folder",
    "pre-commit config": "it changes .pre-commit-config.yaml, which names the hooks your commits",
    "husky": "it changes web/.husky/pre-commit, in a hooks folder",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_apply_refuses_what_only_force_lets_through(repo: Path, run_id: str, kind: str):
    commit_on_run_branch(repo, run_id, HOSTILE[kind])
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id)
    shown = ssw(repo, "runs", "show", run_id, "--json")

    assert result.returncode == 2
    assert result.stderr.startswith(f"ssw: run {run_id} is not applied: {SAID[kind]}")
    assert result.stderr.endswith("--force applies it anyway)\n")
    assert head(repo) == before and git(repo, "status", "--porcelain") == ""
    assert shown.returncode == 0, shown.stderr
    apply = json.loads(shown.stdout)["apply"]
    assert apply["ok"] is False and apply["would_refuse"][0].startswith(SAID[kind])


def test_a_smaller_limit_refuses_a_file_the_default_takes(repo: Path, run_id: str):
    commit_on_run_branch(repo, run_id, {"blob.bin": b"\0" * (2 * 2**20)})
    assert ssw(repo, "runs", "show", run_id).stdout.count("apply: ok") == 1

    result = ssw(repo, "runs", "apply", run_id, "--max-file-mb", "1")

    assert result.returncode == 2 and "blob.bin is 2.0 MB, over the 1 MB limit" in result.stderr


def test_a_link_applied_with_force_is_said_first_and_is_the_link_the_run_made(
    repo: Path, run_id: str
):
    commit_on_run_branch(repo, run_id, {"passwd": Link("/etc/passwd")})

    result = ssw(repo, "runs", "apply", run_id, "--force")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "--force: applied despite: it adds a link: passwd"
    assert os.readlink(repo / "passwd") == "/etc/passwd"


def test_apply_refuses_a_run_whose_gates_failed_unless_forced(repo: Path, run_id: str):
    set_record(repo, run_id, outcome="gates_failed", gates_verdict="failed", reason="tests")
    before = head(repo)

    refused = ssw(repo, "runs", "apply", run_id)

    assert refused.returncode == 2
    assert refused.stderr.startswith(
        f"ssw: run {run_id} is not applied: it ended gates_failed with gates failed"
    )
    assert head(repo) == before
    shown = ssw(repo, "runs", "show", run_id).stdout.splitlines()
    assert "apply: would refuse: it ended gates_failed with gates failed" in shown
    forced = ssw(repo, "runs", "apply", run_id, "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0] == (
        "--force: applied despite: it ended gates_failed with gates failed"
    )
    assert FIX_LINE in (repo / OPS).read_text()


# --- no program but git; the bytes the gates ran ---


def evil_filter(repo: Path, marker: Path) -> None:
    """A filter in the user's own configuration, as git-lfs or git-crypt would be."""
    git(repo, "config", "filter.evil.smudge", f"touch {marker}; cat")
    git(repo, "config", "filter.evil.clean", "cat")


def test_a_filter_the_change_names_does_not_start_even_when_forced(
    repo: Path, run_id: str, tmp_path: Path
):
    marker = tmp_path / "filter-ran"
    evil_filter(repo, marker)
    commit_on_run_branch(repo, run_id, {".gitattributes": b"x filter=evil\n", "x": b"data\n"})
    plain_git_merge(repo, run_id, tmp_path)
    assert marker.exists()  # the control: git merge starts it
    marker.unlink()

    refused = ssw(repo, "runs", "apply", run_id)
    forced = ssw(repo, "runs", "apply", run_id, "--force")

    assert refused.returncode == 2 and "x filter=evil" in refused.stderr
    assert forced.returncode == 0, forced.stderr
    assert not marker.exists()
    assert (repo / "x").read_bytes() == b"data\n"


def test_the_users_own_filter_on_a_written_path_is_named_and_never_started(
    repo: Path, run_id: str, tmp_path: Path
):
    marker = tmp_path / "filter-ran"
    evil_filter(repo, marker)
    user_commits(repo, {".gitattributes": "*.dat filter=evil\n"})
    marker.unlink(missing_ok=True)
    commit_on_run_branch(repo, run_id, {"rows.dat": b"1,2\n"})

    refused = ssw(repo, "runs", "apply", run_id)
    forced = ssw(repo, "runs", "apply", run_id, "--force")

    assert refused.returncode == 2
    assert "your attributes give rows.dat filter=evil: git would start" in refused.stderr
    assert forced.returncode == 0, forced.stderr
    assert not marker.exists() and (repo / "rows.dat").read_bytes() == b"1,2\n"


@pytest.mark.parametrize("named_by", ["attribute", "merge.default"])
def test_a_merge_driver_is_never_started_even_when_forced(
    repo: Path, run_id: str, tmp_path: Path, named_by: str
):
    marker = tmp_path / "driver-ran"
    git(repo, "config", "merge.mine.driver", f"touch {marker}; false")
    if named_by == "merge.default":
        git(repo, "config", "merge.default", "mine")
        user_commits(repo, {"notes.txt": "the user's own\n"})
    else:
        user_commits(repo, {".gitattributes": "*.py merge=mine\n"})
    only_the_run = Path(shutil.copytree(repo, tmp_path / "only-the-run", symlinks=True))
    user_commits(repo, {OPS: (repo / OPS).read_text() + "\n# the user's line\n"})
    control = Path(shutil.copytree(repo, tmp_path / "control", symlinks=True))
    subprocess.run(["git", "merge", "--no-edit", f"ssw/{run_id}"], cwd=control, check=False)
    assert marker.exists()  # the control: git merge starts it
    marker.unlink()
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id)
    forced = ssw(repo, "runs", "apply", run_id, "--force")

    assert result.returncode == 2 and forced.stderr == result.stderr
    assert "your attributes give calc/ops.py merge=mine" in result.stderr
    assert not marker.exists() and head(repo) == before
    # Where only the run changed calc/ops.py, git starts no driver: applied.
    assert ssw(only_the_run, "runs", "apply", run_id).returncode == 0
    assert not marker.exists()


@MERGE_AND_PICK
@pytest.mark.parametrize("attribute", ["ident", "eol=crlf"])
def test_apply_undoes_itself_when_the_checkout_would_not_hold_the_bytes_the_gates_ran(
    repo: Path, run_id: str, tmp_path: Path, attribute: str, how: list[str]
):
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(f"*.py {attribute}\n")
    (repo / OPS).unlink()
    git(repo, "checkout", "--", OPS)  # the user's file as their attributes check it out
    source = b"ID = '$Id$'\nx = 1\n"
    commit_on_run_branch(repo, run_id, {"calc/version.py": source})
    control = plain_git_merge(repo, run_id, tmp_path)
    assert (control / "calc" / "version.py").read_bytes() != source
    before, ops = head(repo), (repo / OPS).read_bytes()

    result = ssw(repo, "runs", "apply", run_id, *how)

    assert result.returncode == 1
    assert "and undone: the checkout did not hold the bytes its gates ran in" in result.stderr
    assert "calc/version.py" in result.stderr and result.stderr.count("\n") == 1
    assert head(repo) == before and (repo / OPS).read_bytes() == ops
    assert not (repo / "calc" / "version.py").exists()
    assert git(repo, "status", "--porcelain") == ""


def test_a_changed_gitattributes_forced_through_is_still_undone_if_it_converts(
    repo: Path, run_id: str
):
    commit_on_run_branch(
        repo, run_id, {".gitattributes": b"*.py ident\n", "calc/v.py": b"ID = '$Id$'\n"}
    )
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id, "--force")

    assert result.returncode == 1 and "calc/v.py" in result.stderr
    assert head(repo) == before and not (repo / ".gitattributes").exists()
