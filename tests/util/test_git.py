"""git by its command line: output as git wrote it, one error format, a hung git ended."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.util.git import git_out, run_git
from tests.harness.cli import wait_for


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # exited, waiting for a parent that is gone too


def test_a_file_name_that_is_not_utf8_comes_back_as_the_same_bytes(repo: Path) -> None:
    name = os.fsdecode(b"caf\xe9.txt")
    (repo / name).write_text("x\n", encoding="utf-8")

    out = git_out(repo, "status", "--porcelain", "-z", "--untracked-files=all")

    assert out.split("\0")[0] == f"?? {name}"
    assert os.fsencode(out.split("\0")[0][3:]) == b"caf\xe9.txt"


def test_output_loses_one_trailing_newline_and_keeps_the_rest(repo: Path) -> None:
    (repo / "a.txt").write_text("one\n\n", encoding="utf-8")
    git_out(repo, "add", "a.txt")

    assert git_out(repo, "show", ":a.txt") == "one\n"


def test_a_failing_command_names_the_subcommand_and_gits_complaint(repo: Path) -> None:
    with pytest.raises(UsageError) as caught:
        git_out(repo, "--no-optional-locks", "rev-parse", "--verify", "no-such-branch")

    assert str(caught.value).startswith(f"{repo}: git rev-parse failed: fatal: ")
    assert run_git(repo, "rev-parse", "--verify", "no-such-branch").status == 128


def test_a_missing_folder_is_said_plainly(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a folder"):
        run_git(tmp_path / "gone", "status")


def test_a_hung_git_is_ended_with_everything_it_started(repo: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # An alias runs through a shell, as a hook would: the shell and its sleep are git's children.
    hang = f"!echo $$ > {pid_file}; sleep 300"

    # Long enough for git to start the alias's shell on a loaded machine (0.5 s once was not:
    # the shell had not written its pid when the limit came).
    with pytest.raises(UsageError, match=r"git hang did not finish in 3 s"):
        run_git(repo, "-c", f"alias.hang={hang}", "hang", timeout=3)

    # The pipes close in the shell's exit before the kernel marks it exited: its end, not a time.
    shell = int(pid_file.read_text())
    wait_for(lambda: _gone(shell), "the alias's shell ended with the git that started it", 30)
