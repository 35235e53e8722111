"""What a run leaves for the user: a commit on its own branch, an untouched checkout, run.json
and steps.jsonl; how limits end a run; and `ssw run` / `ssw demo` as real processes with their
exit codes (0 done, 1 not done, 2 bad input)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from stepswitch.cli.run import RunOptions, run_local
from stepswitch.errors import UsageError
from stepswitch.records.folder import load_run
from stepswitch.records.run import RunRecord
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git, sample_repo
from tests.harness.task import (
    BUG_LINE,
    FIX_LINE,
    Finished,
    approve_and_summarize,
    done,
    every_worker,
    explore,
    fix_the_bug,
    make_policy,
    run_ssw,
    whole_fix,
    worker,
    write_policy,
    write_script,
)

# --- a bug fixed: what the user finds afterwards ---


class FixedRun(NamedTuple):
    run: Finished
    head_before: str


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> FixedRun:
    replies = whole_fix("Fix mean\n\nDivide by n.")
    work = tmp_path_factory.mktemp("fixed")
    repo = sample_repo(work / "repo", "mean_bug")
    head = git(repo, "rev-parse", "HEAD").strip()
    return FixedRun(run_ssw(work, repo, replies), head)


def test_a_fixed_bug_ends_done_with_exit_code_0(fixed: FixedRun):
    record = fixed.run.record
    assert (record.outcome, record.exit_code, record.reason) == ("done", 0, "the gates passed")
    assert [g.note for g in fixed.run.of("gates")] == ["passed"]


def test_the_change_is_one_commit_on_the_runs_branch_and_it_fixes_the_bug(fixed: FixedRun):
    run, repo = fixed.run, fixed.run.repo
    branch = run.record.branch
    assert branch == f"ssw/{run.record.run_id}"
    assert git(repo, "rev-parse", branch).strip() == run.record.commit
    assert git(repo, "log", "--format=%s", f"main..{branch}").split("\n")[:-1] == ["Fix mean"]
    message = git(repo, "log", "-1", "--format=%B", branch)
    assert f"Ssw-Run: {run.record.run_id}" in message and "Ssw-Model: scripted" in message
    assert run.branch_files() == ["calc/ops.py"]
    diff = run.branch_diff()
    assert f"-{BUG_LINE}\n" in diff and f"+{FIX_LINE}\n" in diff


def test_the_users_checkout_is_untouched(fixed: FixedRun):
    repo = fixed.run.repo
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "HEAD").strip() == fixed.head_before
    assert git(repo, "branch", "--show-current").strip() == "main"
    assert BUG_LINE in (repo / "calc" / "ops.py").read_text()


def test_the_worktree_is_removed_and_git_lists_only_the_main_checkout(fixed: FixedRun):
    repo = fixed.run.repo
    assert not (fixed.run.repo / fixed.run.record.worktree).exists()
    listed = [
        line.removeprefix("worktree ")
        for line in git(repo, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]
    assert listed == [str(repo)]


def test_run_json_and_steps_jsonl_are_written_and_parse(fixed: FixedRun):
    run = fixed.run
    run_json = run.folder / "run.json"
    steps_jsonl = run.folder / "steps.jsonl"
    saved = RunRecord.model_validate_json(run_json.read_text())
    assert saved == run.record
    assert (saved.scripted, saved.outcome, saved.finished_at is not None) == (True, "done", True)
    assert steps_jsonl.exists()
    events = load_run(run.folder).steps
    assert [getattr(e, "step_type", e.kind) for e in events] == [
        "plan",
        "navigate",
        "read",
        "run",
        "edit",
        "edit",
        "gates",
        "review",
        "review",
        "review",
        "summarize",
        "finish",
    ]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert saved.totals.steps == len(run.model_steps) == 9
    assert [s.step for s in run.model_steps] == list(range(1, 10))
    # The tests that ran the changed line first (the call map's stage), then the full suite,
    # each with its full log kept.
    logs = sorted(p.name for p in (run.folder / "logs").iterdir())
    assert len(logs) == 2 and "covered" in logs[0] and "full" in logs[1]
    assert fixed.run.of("gates")[0].timings["full_ran"] is True


def test_every_model_step_is_labelled_scripted_in_the_records_and_the_output(fixed: FixedRun):
    assert all(s.scripted and s.run_id == fixed.run.record.run_id for s in fixed.run.model_steps)
    printed = [line for line in fixed.run.lines if line[:3].strip().isdigit()]
    assert len(printed) == 9 and all(line.endswith("[scripted]") for line in printed)
    assert "SCRIPTED" in fixed.run.lines[0]


def test_every_record_of_a_scripted_run_says_scripted_the_gates_and_verdicts_too(
    fixed: FixedRun,
):
    assert [s.step_type for s in fixed.run.steps if not s.scripted] == []


def test_bytecode_left_by_the_gates_is_not_committed_with_the_change(
    tmp_path: Path, bug_repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)  # as most users run
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # no personal ignore rules
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    run = run_ssw(tmp_path, bug_repo, whole_fix())

    assert run.record.outcome == "done"
    assert run.branch_files() == ["calc/ops.py"]


# --- limits: the run stops, says why, exits 1, and still commits what it has ---


def _usage(prompt_tokens: int) -> dict[str, Any]:
    return {"usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 0}}


def test_a_run_stops_before_the_call_that_could_pass_its_budget(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    # $10 per million tokens: each reply bills 2,000 prompt tokens (inside the bound of its
    # ~2.6-3.3 kB body), $0.02. Each call reserves its prompt bound (body bytes + 1,024) and its
    # 1,024-token cap (no lower cap above the floor): ~$0.05. After two calls $0.04 is
    # spent, and the third could cost ~$0.05 more: past a $0.08 budget.
    workers = every_worker("scripted-priced", max_output_tokens=1024)
    policy = make_policy(workers=workers)
    replies = [{**reply, **_usage(2_000)} for reply in [*explore(), *fix_the_bug()]]
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy, budget_usd=0.08)

    assert (run.record.outcome, run.record.exit_code) == ("limit", 1)
    assert "refused a call before sending it" in run.record.reason
    assert "of $0.08 already has $0.0400 counted against it" in run.record.reason
    assert [s.cost.low if s.cost else None for s in run.steps] == [0.02, 0.02, 0.0]  # 3rd not sent
    assert "refused a call before sending it" in (run.steps[2].error or "")
    assert run.steps[2].attempts == 0
    assert run.record.cost.low == pytest.approx(0.04) and run.record.cost.low <= 0.08
    assert run.saved.outcome == "limit"
    # Nothing was changed: no "unfinished" commit claims anything; the branch is the base.
    assert run.record.commit is None
    assert git(bug_repo, "rev-parse", run.record.branch).strip() == run.record.base_commit


def test_a_provider_that_reports_no_usage_stops_the_run_with_the_reason(
    tmp_path: Path, bug_repo: Path
):
    replies = [{**done("plan"), "omit_usage": True}, *explore()[1:]]
    run = run_ssw(tmp_path, bug_repo, replies)

    assert (run.record.outcome, run.record.exit_code) == ("limit", 1)
    assert run.record.reason == (
        "scripted scripted-large reported no usage for step 1: its cost is only known to be at "
        'most $0.0000; stopping (set [ledger] on_lost_usage = "continue" to go on, counting the '
        "high bound)"
    )
    [step] = run.steps
    assert (step.usage_reported, step.note) == (
        False,
        "no usage reported: the cost is a range up to the reservation",
    )
    assert not (run.repo / run.record.worktree).exists()


def test_with_on_lost_usage_continue_a_step_without_usage_does_not_stop_the_run(
    tmp_path: Path, bug_repo: Path
):
    replies = [{**done("plan"), "omit_usage": True}, *explore()[1:], *fix_the_bug()]
    replies += approve_and_summarize()
    policy = make_policy(ledger={"on_lost_usage": "continue"})
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy)

    assert (run.record.outcome, run.record.exit_code) == ("done", 0)
    assert [s.usage_reported for s in run.model_steps][:2] == [False, True]


def test_a_script_that_runs_out_of_replies_ends_the_run_with_exit_1_and_the_error(
    tmp_path: Path, bug_repo: Path
):
    run = run_ssw(tmp_path, bug_repo, explore()[:2])

    assert (run.record.outcome, run.record.exit_code) == ("error", 1)
    assert "the script has 2 replies and the run asked for reply #3" in run.record.reason
    assert "asked for reply #3" in (run.steps[-1].error or "")
    assert run.saved.outcome == "error"
    assert not (run.repo / run.record.worktree).exists()


def test_a_policy_naming_an_unknown_provider_is_refused_without_leaving_a_worktree(
    tmp_path: Path, bug_repo: Path
):
    policy = make_policy(workers={"small": worker("scripted-small") | {"provider": "nosuch"}})
    options = RunOptions(
        repo=bug_repo,
        task="fix mean",
        policy_path=write_policy(tmp_path, policy),
        script=write_script(tmp_path, explore()),
    )
    with pytest.raises(UsageError, match="unknown provider 'nosuch'"):
        run_local(options, lambda line: None)

    assert git(bug_repo, "worktree", "list", "--porcelain").count("worktree ") == 1


# --- the command line, as a real process ---


def ssw(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return run_ssw_cli(args, env=env, timeout=60)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """A policy and a script for `ssw run`."""
    replies = whole_fix()
    return write_policy(tmp_path, make_policy()), write_script(tmp_path, replies)


def test_ssw_run_with_too_few_max_steps_exits_1_with_outcome_limit_as_json(
    bug_repo: Path, files: tuple[Path, Path]
):
    policy, script = files
    result = ssw("run", bug_repo, "--policy", policy, "--script", script, "--task", "fix mean",
                 "--max-steps", "2", "--json")  # fmt: skip

    assert result.returncode == 1, result.stderr
    record = json.loads(result.stdout)
    assert (record["outcome"], record["exit_code"], record["totals"]["steps"]) == ("limit", 1, 2)
    assert record["reason"] == "the run used its 2 steps (max_steps)"
    assert "limit: the run used its 2 steps" in result.stderr  # the bill, on stderr


def test_ssw_run_without_a_task_exits_2_with_one_line(bug_repo: Path, files: tuple[Path, Path]):
    policy, script = files
    result = ssw("run", bug_repo, "--policy", policy, "--script", script)

    assert result.returncode == 2
    assert result.stderr == (
        "ssw: give the task with exactly one of --task TEXT or --task-file F\n"
    )
    assert not (bug_repo / ".ssw").exists()


def test_ssw_run_with_a_bad_policy_key_exits_2_naming_the_key(
    tmp_path: Path, bug_repo: Path, files: tuple[Path, Path]
):
    _, script = files
    (tmp_path / "bad").mkdir()
    policy = write_policy(tmp_path / "bad", make_policy(limits={"max_step": 3}))
    result = ssw("run", bug_repo, "--policy", policy, "--script", script, "--task", "fix mean")

    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert f"{policy}: limits.max_step: unknown key" in result.stderr
    assert "max_steps" in result.stderr  # the fix names the keys it takes
    assert not (bug_repo / ".ssw").exists()


def test_ssw_run_on_a_folder_that_is_not_a_git_repository_exits_2(
    tmp_path: Path, files: tuple[Path, Path]
):
    policy, script = files
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("not a repository\n")
    result = ssw("run", plain, "--policy", policy, "--script", script, "--task", "fix mean")

    assert result.returncode == 2
    assert result.stderr == (
        f"ssw: {plain} is not the top of a git repository; run `git init` there\n"
    )
    assert sorted(p.name for p in plain.iterdir()) == ["notes.txt"]


def test_ssw_demo_json_prints_only_the_run_record_and_it_is_scripted_and_done(tmp_path: Path):
    result = ssw("demo", "--dir", tmp_path / "demo", "--json")

    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)  # stdout is the JSON and nothing else
    assert (record["scripted"], record["outcome"], record["exit_code"]) == (True, "done", 0)
    assert "SCRIPTED" in result.stderr and "done: the gates passed" in result.stderr
    assert git(tmp_path / "demo", "status", "--porcelain") == ""


def test_ssw_run_ends_by_saying_where_its_replay_page_and_its_records_are(
    bug_repo: Path, files: tuple[Path, Path]
):
    """Issue 43: `ssw run` never printed its replay page. Its last two lines now say where the
    page is (built into the run's folder) and which command shows the run in full."""
    policy, script = files
    result = ssw("run", bug_repo, "--policy", policy, "--script", script, "--task", "fix mean")

    assert result.returncode == 0, result.stderr
    *_, page_line, details = result.stdout.splitlines()
    [run_id] = [p.name for p in (bug_repo / ".ssw" / "runs").iterdir()]
    page = bug_repo.resolve() / ".ssw" / "runs" / run_id / "replay" / "index.html"
    assert page_line == f"replay page: {page}"
    assert page.is_file() and run_id in page.read_text(encoding="utf-8")
    assert details == f"details: ssw runs show {run_id}"
    assert git(bug_repo, "status", "--porcelain") == ""  # the page is under .ssw/, not the checkout
