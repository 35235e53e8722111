"""`ssw demo --repo PATH`: with no key, a scripted tour of the user's own repository that says
what it is: canned replies that fit any repository, no edit, the repository's real gates."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from stepswitch.errors import ConfigError
from stepswitch.fakes.scripted import load_script
from tests.harness.cli import run_ssw_cli

REPOS = Path(__file__).resolve().parent / "fixtures" / "repos"
GIT = {"GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@l", "GIT_COMMITTER_NAME": "u",
       "GIT_COMMITTER_EMAIL": "u@l"}  # fmt: skip


def _repo(tmp_path: Path, sample: str, fixed: bool = False) -> Path:
    repo = tmp_path / sample
    shutil.copytree(REPOS / sample, repo, ignore=shutil.ignore_patterns("__pycache__"))
    if fixed:  # the bug fixed: the repository's tests pass at its last commit
        ops = repo / "calc" / "ops.py"
        ops.write_text(ops.read_text().replace("(len(values) + 1)", "len(values)"))
    env = {**os.environ, **GIT}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def _tour(repo: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return run_ssw_cli(["demo", "--repo", str(repo), *extra], env=env, timeout=180)


def _diff(repo: Path, branch: str) -> str:
    done = subprocess.run(["git", "diff", "main", branch], cwd=repo, capture_output=True)
    return done.stdout.decode()


def test_a_tour_of_a_passing_repository_ends_no_change_and_says_it_is_scripted(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path, "mean_bug", fixed=True)
    result = _tour(repo, "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    # Nothing changed: never `done`; the verdict is the gates' on the untouched tree.
    assert (record["outcome"], record["scripted"], record["gates_verdict"]) == (
        "no_change", True, "not_run",
    )  # fmt: skip
    assert "it ended no_change (no change is never `done`)" in result.stderr
    assert "the suite fails before any edit" not in result.stderr
    assert _diff(repo, record["branch"]) == ""  # nothing changed
    assert result.stderr.startswith("scripted tour: every reply is canned (no model, no key)")
    assert "(scripted tour: a canned reply, no model read this repository)" in result.stderr
    assert "that was the tour; for a real run: `ssw init PROVIDER`" in result.stderr
    assert "replay page: " in result.stderr


def test_a_tour_of_a_repository_whose_tests_fail_gives_the_gates_real_verdict(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path, "mean_bug")
    result = _tour(repo, "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    # The tour fits this repository too: it ends as a tour ends, not out of replies, and the
    # pre-flight says the suite already fails on the untouched tree.
    assert record["outcome"] == "no_change"
    assert "the suite fails before any edit" in result.stderr
    assert _diff(repo, record["branch"]) == ""


def test_the_tour_options_are_checked(tmp_path: Path) -> None:
    both = _tour(tmp_path, "--dir", str(tmp_path / "d"))
    assert (both.returncode, both.stderr) == (
        2, "ssw: give --repo PATH (your repository) or --dir D (the sample's), not both\n",
    )  # fmt: skip


def test_a_script_is_replies_or_the_tour_never_both(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("tour: true\nreplies: [{content: hi}]\n")
    with pytest.raises(ConfigError, match="either replies"):
        load_script(script)
    script.write_text("tour: true\n")
    assert load_script(script).tour
