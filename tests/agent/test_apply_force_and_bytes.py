"""`ssw runs apply` refuses what only --force lets through (a run whose gates did not pass,
links, submodules, big files, git's configuration files, hooks), starts no program but git (no
filter, no merge driver), and undoes itself when the checkout would not hold the bytes the gates
ran. Each attack has a control: plain git on a copy does the harm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness.repo import git
from tests.harness.task import FIX_LINE

from .apply_runs import (
    MERGE_AND_PICK,
    OPS,
    Content,
    Gitlink,
    Link,
    commit_on_run_branch,
    finished,
    head,
    plain_git_merge,
    repo,
    run_id,
    set_record,
    ssw,
    user_commits,
)

__all__ = ["finished", "repo", "run_id"]  # fixtures


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
    "bytecode": {"calc/__pycache__/ops.cpython-311.pyc": b"\x00" * 16},
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
    "bytecode": "it adds calc/__pycache__/ops.cpython-311.pyc, bytecode or a tool's cache",
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


@pytest.mark.parametrize("limit", ["0", "-1", "inf", "nan"])
def test_a_size_limit_that_is_no_size_is_one_line_with_exit_2(repo: Path, run_id: str, limit: str):
    result = ssw(repo, "runs", "apply", run_id, "--max-file-mb", limit)

    assert result.returncode == 2
    assert result.stderr.startswith("ssw: --max-file-mb must be a number of MB more than 0, not ")
    assert result.stderr.count("\n") == 1


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
        f"ssw: run {run_id} is not applied: it ended gates_failed (tests); its gates failed"
    )
    assert head(repo) == before
    shown = ssw(repo, "runs", "show", run_id).stdout.splitlines()
    assert "apply: would refuse: it ended gates_failed (tests); its gates failed" in shown
    forced = ssw(repo, "runs", "apply", run_id, "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines()[0] == (
        "--force: applied despite: it ended gates_failed (tests); its gates failed"
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
