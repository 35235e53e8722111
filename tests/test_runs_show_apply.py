"""`ssw runs show ID` (what a run did, from its records and its branch) and `ssw runs apply ID`
(its commits onto the user's current branch): one real scripted run whose edit steps are priced,
then `ssw` run as the user runs it on a fresh copy of its repository for each test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.records.folder import load_run
from stepswitch.records.money import CostRange
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git, sample_repo
from tests.harness.task import (
    BUG_LINE,
    FIX_LINE,
    make_policy,
    run_ssw,
    use_extra_models,
    whole_fix,
    worker,
)

from .test_runs import Runner

OPS = "calc/ops.py"


def ssw(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("SSW_LEDGER", None)  # the repository's own ledger, the one the run wrote
    return run_ssw_cli([*args, "--repo", str(repo)], env=env, timeout=60)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A repository after one done run that fixed the bug on its branch, and the run's id;
    the edit steps' worker has a price, so the bill is not $0."""
    work = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("SSW_LEDGER", raising=False)
        use_extra_models(patch, work)
        policy = make_policy()
        policy["workers"]["mid"] = worker("scripted-priced")
        repo = sample_repo(work / "repo", "mean_bug")
        git(repo, "config", "user.name", "user")  # who the merge commits are by
        git(repo, "config", "user.email", "user@localhost")
        replies = whole_fix("Fix mean")
        run = run_ssw(work, repo, replies, policy=policy)
    assert run.record.outcome == "done" and run.record.commit is not None
    yield repo, run.record.run_id


@pytest.fixture
def repo(finished: tuple[Path, str], tmp_path: Path) -> Path:
    """A copy of the finished run's repository, records and ledger too, for this test alone."""
    return Path(shutil.copytree(finished[0], tmp_path / "repo", symlinks=True))


@pytest.fixture
def run_id(finished: tuple[Path, str]) -> str:
    return finished[1]


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


# --- show ---


def test_show_prints_each_step_the_bill_the_verdicts_and_the_diff_stat(repo: Path, run_id: str):
    result = ssw(repo, "runs", "show", run_id)

    assert result.returncode == 0, result.stderr
    out = result.stdout
    lines = out.splitlines()
    assert lines[0] == f"run {run_id}: done (the gates passed) [scripted]"
    steps = load_run(repo / ".ssw" / "runs" / run_id).model_steps
    step_lines = [x for x in lines if x.endswith("[scripted]") and x[:3].strip().isdigit()]
    assert len(step_lines) == len(steps) == 9
    for line, step in zip(step_lines, steps, strict=True):
        assert line.split()[:4] == [str(step.step), step.step_type, step.worker, step.model]
        assert str(step.cost) in line
    edits = [s for s in steps if s.worker == "mid"]
    assert edits and all(s.cost is not None and s.cost.low > 0 for s in edits)
    total = sum((s.cost or CostRange() for s in steps), CostRange())
    assert f"bill: {total} over 9 steps" in out
    assert f"  mid          {total}" in lines  # every priced dollar is the mid worker's
    assert "gates: passed (tests:covered passed, tests:full passed; 1 round(s))" in lines
    assert "review: approve, second opinion approve" in lines
    assert " calc/ops.py | 2 +-" in lines
    assert " 1 file changed, 1 insertion(+), 1 deletion(-)" in lines
    assert "note: every reply came from a script" in out
    assert f"+{FIX_LINE}" not in out  # the whole diff only with --diff


def test_show_with_diff_prints_the_whole_change(repo: Path, run_id: str):
    result = ssw(repo, "runs", "show", run_id, "--diff")
    assert result.returncode == 0, result.stderr
    assert f"-{BUG_LINE}\n+{FIX_LINE}\n" in result.stdout


def test_show_json_parses_and_holds_the_same(repo: Path, run_id: str):
    result = ssw(repo, "runs", "show", run_id, "--json", "--diff")

    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert (shown["id"], shown["outcome"], shown["scripted"]) == (run_id, "done", True)
    assert shown["task"].startswith("calc.ops.mean divides")
    assert shown["policy"]["path"] == "policy.toml"
    assert shown["policy"]["as_loaded"]["workers"]["mid"]["model"] == "scripted-priced"
    assert [s["type"] for s in shown["steps"]][:2] == ["plan", "navigate"]
    assert {s["scripted"] for s in shown["steps"]} == {True}
    paid = [s for s in shown["steps"] if s["worker"] == "mid"]
    assert paid and all(s["dollars"]["low"] > 0 for s in paid)
    low = sum(s["dollars"]["low"] for s in shown["steps"])
    assert shown["dollars"]["low"] == pytest.approx(low)
    assert shown["dollars_text"].startswith("$")
    assert shown["gates"]["verdict"] == "passed"
    assert shown["gates"]["rounds"][-1]["gates"] == [
        {"name": "tests:covered", "passed": True},
        {"name": "tests:full", "passed": True},
    ]
    assert shown["review"]["verdict"] == "approve"
    assert "1 file changed" in shown["diff_stat"]
    assert f"+{FIX_LINE}" in shown["diff"]


def test_show_of_an_unknown_id_is_one_line_with_exit_2(repo: Path):
    result = ssw(repo, "runs", "show", "nope")
    assert result.returncode == 2
    assert result.stderr == f"ssw: no run 'nope' in {repo} (fix: `ssw runs` lists them)\n"
    assert result.stdout == ""


def test_the_runs_list_marks_a_scripted_run(repo: Path, run_id: str):
    table = ssw(repo, "runs").stdout
    row = next(line for line in table.splitlines() if line.startswith(run_id))
    assert row.split()[1:3] == ["done", "[scripted]"]
    listed = json.loads(ssw(repo, "runs", "--json").stdout)
    assert [(r["id"], r["scripted"]) for r in listed] == [(run_id, True)]


# --- apply ---


def test_apply_merges_the_runs_change_onto_the_current_branch(repo: Path, run_id: str):
    git(repo, "switch", "-q", "-c", "work")
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 0, result.stderr
    after = head(repo)
    assert FIX_LINE in (repo / OPS).read_text() and BUG_LINE not in (repo / OPS).read_text()
    assert git(repo, "rev-list", "--parents", "-1", "HEAD").split() == [
        after,
        before,
        git(repo, "rev-parse", f"ssw/{run_id}").strip(),
    ]
    assert git(repo, "branch", "--show-current").strip() == "work"
    assert git(repo, "rev-parse", "main").strip() == before  # only the current branch moved
    assert result.stdout.splitlines() == [
        f"merged run {run_id} (1 commit) into work with a merge commit:",
        f"  {git(repo, 'rev-parse', f'ssw/{run_id}').strip()[:12]} Fix mean",
        f"HEAD is now {after[:12]} (work)",
    ]
    assert git(repo, "status", "--porcelain") == ""
    again = ssw(repo, "runs", "apply", run_id)
    assert again.returncode == 0 and again.stdout.startswith("nothing to apply")
    assert head(repo) == after


def test_apply_with_cherry_pick_makes_one_new_commit_on_the_branch(repo: Path, run_id: str):
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id, "--cherry-pick")

    assert result.returncode == 0, result.stderr
    after = head(repo)
    assert git(repo, "rev-list", "--parents", "-1", "HEAD").split() == [after, before]
    assert git(repo, "log", "-1", "--format=%s", "HEAD").strip() == "Fix mean"
    assert FIX_LINE in (repo / OPS).read_text()
    original = git(repo, "rev-parse", f"ssw/{run_id}").strip()
    assert f"  {original[:12]} -> {after[:12]} Fix mean" in result.stdout.splitlines()
    assert result.stdout.splitlines()[-1] == f"HEAD is now {after[:12]} (main)"


def test_apply_refuses_a_dirty_checkout_and_leaves_it_untouched(repo: Path, run_id: str):
    (repo / OPS).write_text((repo / OPS).read_text() + "# the user's edit\n")
    (repo / "notes.txt").write_text("not committed\n")
    before, ops = head(repo), (repo / OPS).read_text()

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 2
    assert result.stderr == (
        f"ssw: {repo} has uncommitted changes (2 files: calc/ops.py, notes.txt): commit or "
        f"stash them before applying run {run_id}\n"
    )
    assert head(repo) == before and (repo / OPS).read_text() == ops
    assert (repo / "notes.txt").read_text() == "not committed\n"


@pytest.mark.parametrize("how", [[], ["--cherry-pick"]], ids=["merge", "cherry-pick"])
def test_a_conflict_is_aborted_and_leaves_the_checkout_as_it_was(
    repo: Path, run_id: str, how: list[str]
):
    ops = (repo / OPS).read_text().replace(BUG_LINE, "    return sum(values) / max(len(values), 1)")
    (repo / OPS).write_text(ops)
    git(repo, "commit", "-q", "-am", "the user's own fix")
    before = head(repo)

    result = ssw(repo, "runs", "apply", run_id, *how)

    assert result.returncode == 1
    command = "cherry-pick" if how else "merge"
    assert result.stderr.startswith(
        f"ssw: run {run_id} does not apply to main: conflicts in 1 file: calc/ops.py; the "
        f"{command} was aborted and the checkout is as it was"
    )
    assert result.stderr.count("\n") == 1
    assert head(repo) == before and (repo / OPS).read_text() == ops
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert not (repo / ".git" / "CHERRY_PICK_HEAD").exists()


def test_apply_refuses_a_run_whose_branch_is_gone(repo: Path, run_id: str):
    cleaned = ssw(repo, "runs", "clean", run_id, "--force")
    assert cleaned.returncode == 0, cleaned.stdout

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 2
    assert result.stderr == (
        f"ssw: run {run_id}'s branch ssw/{run_id} is gone (`ssw runs clean` removes it): "
        "nothing to apply\n"
    )


def test_apply_refuses_a_running_run_and_a_run_without_a_commit(repo: Path):
    runner = Runner(repo, "20261201-000000-ffffff")
    try:
        running = ssw(repo, "runs", "apply", runner.run_id)
        assert running.returncode == 2
        assert running.stderr == (
            f"ssw: run {runner.run_id} is still running (pid {runner.proc.pid}): apply it once "
            "it has ended\n"
        )
    finally:
        runner.kill()
    killed = ssw(repo, "runs", "apply", runner.run_id)
    assert killed.returncode == 2
    assert killed.stderr == (
        f"ssw: run {runner.run_id} made no commit (abandoned): nothing to apply\n"
    )


def test_apply_runs_no_hook_of_the_checkout(repo: Path, run_id: str):
    fired = repo.parent / "hook-fired"
    for name in ("pre-merge-commit", "post-merge", "reference-transaction"):
        hook = repo / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {fired}\n")
        hook.chmod(0o755)
    git(repo, "commit", "-q", "--allow-empty", "-m", "the control: git itself runs the hooks")
    assert "reference-transaction" in fired.read_text()
    fired.unlink()

    result = ssw(repo, "runs", "apply", run_id)

    assert result.returncode == 0, result.stderr
    assert FIX_LINE in (repo / OPS).read_text()
    assert not fired.exists()


def test_apply_refuses_a_repository_found_inside_a_runs_work_tree(repo: Path, run_id: str):
    planted = repo / ".ssw" / "worktrees" / run_id
    planted.mkdir(parents=True)
    git(planted, "init", "-q", "-b", "main")  # what a model could leave in its work tree
    before = head(repo)

    result = ssw(planted, "runs", "apply", run_id)

    assert result.returncode == 2
    assert result.stderr == (
        f"ssw: {planted} is inside a run's work tree; run ssw from the checkout "
        f"(fix: --repo {repo})\n"
    )
    assert head(repo) == before and BUG_LINE in (repo / OPS).read_text()
