"""`ssw run --continue ID`: a run that stopped (a limit, Ctrl-C, a provider error) is picked up
on a new branch after its own, with its task and policy, judged by the same base commit, and
its dollars counted against the same task budget."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from stepswitch.cli.run import RunOptions, run_local
from stepswitch.errors import UsageError
from stepswitch.records.folder import load_run
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git, sample_repo
from tests.harness.task import (
    FIX_LINE,
    approve_and_summarize,
    done,
    every_worker,
    explore,
    fix_the_bug,
    make_policy,
    run_ssw,
    tool,
    whole_fix,
    write_script,
)

# Stopped by its step limit right after the fix: the gates never ran.
STOPPED_AFTER_THE_FIX = [*explore(), *fix_the_bug()]


def _continue(workdir: Path, repo: Path, run_id: str, replies: list[dict], **extra) -> tuple:
    workdir.mkdir()
    lines: list[str] = []
    options = RunOptions(
        repo=repo,
        task="",
        policy_path=None,
        script=write_script(workdir, replies),
        continue_from=run_id,
        **extra,
    )
    record = run_local(options, lines.append)
    return record, lines


def test_a_run_stopped_by_its_limit_is_continued_on_a_new_branch_after_its_own(
    tmp_path: Path, bug_repo: Path
) -> None:
    first = run_ssw(tmp_path, bug_repo, STOPPED_AFTER_THE_FIX, max_steps=6)
    assert first.record.outcome == "limit"
    tip = git(bug_repo, "rev-parse", first.record.branch).strip()

    # The fix is in the tree already: the steps are told so, and edit only says done; the
    # earlier plan and summaries are kept, so no exploring step is asked again.
    replies = [done("the fix is already there"), *approve_and_summarize()]
    # Its policy is the earlier run's, as run.json keeps it (max_steps 6 too): given more steps.
    record, lines = _continue(
        tmp_path / "again", bug_repo, first.record.run_id, replies, max_steps=20
    )

    assert (record.outcome, record.continues) == ("done", first.record.run_id), record.reason
    assert record.task == first.record.task and record.policy_path == first.record.policy_path
    assert record.ids.task_id == first.record.ids.task_id  # one task: one budget
    assert record.base_commit == first.record.base_commit

    # Judged as the base commit has it: the pre-flight saw the bug's failing test.
    def verdicts(gates):
        return [(g.name, g.passed, g.report) for g in gates]

    assert verdicts(record.baseline_gates) == verdicts(first.record.baseline_gates)
    assert record.gates_verdict == "passed"
    assert FIX_LINE in git(bug_repo, "show", f"{record.branch}:calc/ops.py")
    git(bug_repo, "merge-base", "--is-ancestor", tip, record.branch)  # after the earlier work
    assert git(bug_repo, "rev-parse", first.record.branch).strip() == tip  # that one untouched
    assert any(f"continuing run {first.record.run_id}" in line for line in lines)


def test_a_finished_or_unknown_run_cannot_be_continued(tmp_path: Path, bug_repo: Path) -> None:
    replies = whole_fix()
    finished = run_ssw(tmp_path, bug_repo, replies)
    assert finished.record.outcome == "done"
    with pytest.raises(UsageError, match="it ended done; only a run that ended interrupted"):
        _continue(tmp_path / "a", bug_repo, finished.record.run_id, replies)
    with pytest.raises(UsageError, match="no such run"):
        _continue(tmp_path / "b", bug_repo, "20260101-000000-abcdef", replies)
    with pytest.raises(UsageError, match="is no run id"):
        _continue(tmp_path / "c", bug_repo, "../../etc", replies)


def test_a_moved_or_deleted_branch_is_refused(tmp_path: Path, bug_repo: Path) -> None:
    first = run_ssw(tmp_path, bug_repo, STOPPED_AFTER_THE_FIX, max_steps=6)
    git(bug_repo, "branch", "-D", first.record.branch)
    with pytest.raises(UsageError, match="is gone"):
        _continue(tmp_path / "a", bug_repo, first.record.run_id, [])


def test_the_earlier_runs_dollars_count_against_the_new_budget(
    tmp_path: Path, bug_repo: Path, extra_models: Path
) -> None:
    priced = every_worker("scripted-priced")
    policy = make_policy(workers=priced)
    first = run_ssw(tmp_path, bug_repo, STOPPED_AFTER_THE_FIX, policy=policy, max_steps=6)
    assert first.record.outcome == "limit"
    spent = first.record.totals.cost.high
    assert spent > 0

    # A budget the earlier run used up already: refused before anything is made.
    with pytest.raises(UsageError, match="nothing is left"):
        _continue(tmp_path / "a", bug_repo, first.record.run_id, [done()], budget_usd=spent / 2)
    assert len(list((bug_repo / ".ssw" / "runs").iterdir())) == 1

    replies = [done("already fixed"), *approve_and_summarize()]
    record, lines = _continue(
        tmp_path / "b",
        bug_repo,
        first.record.run_id,
        replies,
        budget_usd=spent * 10,
        max_steps=20,
    )
    assert record.outcome == "done"
    assert any(f"of its ${spent * 10:g} budget" in line for line in lines)
    ledger = bug_repo / ".ssw" / "ledger.sqlite"
    with sqlite3.connect(ledger) as db:
        runs = db.execute(
            "SELECT DISTINCT run_id FROM calls WHERE task_id = ?", (first.record.ids.task_id,)
        ).fetchall()
    assert {r[0] for r in runs} == {first.record.run_id, record.run_id}


def test_an_earlier_run_that_rewrote_the_tests_is_still_judged_by_the_base_commits_tests(
    tmp_path: Path, bug_repo: Path
) -> None:
    """The earlier branch is the model's: a test it emptied does not pass the continued run."""
    emptied = tool(
        "write_file",
        path="tests/test_ops.py",
        content="def test_mean_of_three_numbers():\n    pass\n",
    )
    first = run_ssw(tmp_path, bug_repo, [*explore(), emptied, done("tests fixed")], max_steps=6)
    assert first.record.outcome == "limit"
    assert "pass" in git(bug_repo, "show", f"{first.record.branch}:tests/test_ops.py")

    replies = [done("nothing left to do"), done("still"), done("still"), done("x")]
    policy_steps = {"max_steps": 20}
    record, _ = _continue(
        tmp_path / "again", bug_repo, first.record.run_id, replies, **policy_steps
    )
    assert record.gates_verdict == "failed", record.reason
    assert record.outcome != "done"


def test_ssw_run_continue_through_the_cli(tmp_path: Path, bug_repo: Path) -> None:
    first = run_ssw(tmp_path, bug_repo, STOPPED_AFTER_THE_FIX, max_steps=6)
    again = tmp_path / "again"
    again.mkdir()
    replies = [done("the fix is already there"), *approve_and_summarize()]
    command = ["run", str(bug_repo), "--json"]
    command += ["--continue", first.record.run_id, "--script", str(write_script(again, replies))]
    result = run_ssw_cli([*command, "--max-steps", "20"], timeout=120)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert (record["outcome"], record["continues"]) == ("done", first.record.run_id)
    assert f"continuing run {first.record.run_id}" in result.stderr

    unknown = run_ssw_cli([*command[:2], "--continue", "nope"], timeout=60)
    assert (unknown.returncode, unknown.stderr) == (
        2,
        f"ssw: --continue nope: no such run in {bug_repo} (see `ssw runs`)\n",
    )


def test_a_continued_run_goes_on_where_it_stopped_with_todays_flags_and_costs_less_than_anew(
    tmp_path: Path, bug_repo: Path, extra_models: Path
) -> None:
    priced = every_worker("scripted-priced")
    policy = make_policy(workers=priced, limits={"steps_per_rung": 30})
    first = run_ssw(tmp_path, bug_repo, STOPPED_AFTER_THE_FIX, policy=policy, max_steps=6)
    assert first.record.outcome == "limit"
    assert first.record.policy["limits"]["steps_per_rung"] == 6  # lowered by its --max-steps

    replies = [done("the fix is already there"), *approve_and_summarize()]
    record, lines = _continue(
        tmp_path / "again", bug_repo, first.record.run_id, replies, max_steps=40
    )

    assert record.outcome == "done", record.reason
    # Today's --max-steps applies to the policy as its file had it, not to the lowered one.
    assert (record.policy["limits"]["max_steps"], record.policy["limits"]["steps_per_rung"]) == (
        40,
        30,
    )
    again = load_run(bug_repo / ".ssw" / "runs" / record.run_id)
    assert [s.step_type for s in again.model_steps] == ["edit", "review", "review", "summarize"]
    assert any("it keeps the earlier plan, files, notes, observed" in line for line in lines)

    fresh_repo = sample_repo(tmp_path / "fresh-repo", "mean_bug")
    (tmp_path / "fresh").mkdir()
    fresh = run_ssw(
        tmp_path / "fresh",
        fresh_repo,
        whole_fix(),
        policy=policy,
    )
    assert fresh.record.outcome == "done"
    assert record.totals.cost.high < fresh.record.totals.cost.high


def test_replan_asks_the_exploring_steps_again(tmp_path: Path, bug_repo: Path) -> None:
    first = run_ssw(tmp_path, bug_repo, STOPPED_AFTER_THE_FIX, max_steps=6)
    replies = [*explore(), done("the fix is already there"), *approve_and_summarize()]
    record, lines = _continue(
        tmp_path / "again", bug_repo, first.record.run_id, replies, max_steps=20, replan=True
    )

    assert record.outcome == "done", record.reason
    again = load_run(bug_repo / ".ssw" / "runs" / record.run_id)
    assert [s.step_type for s in again.model_steps][:4] == ["plan", "navigate", "read", "run"]
    assert any("it plans and explores again" in line for line in lines)
