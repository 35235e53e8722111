"""Escalation by the rules the README states, and no `done` without a change: full scripted runs
through `run_local` (as `ssw run` does them), the real client, tools and gates. Scripted replies
speak of ssw's routing rules only, never of a model."""

from __future__ import annotations

from pathlib import Path

from stepswitch.agent.workspace.runs import clean_run, find_run
from stepswitch.records.steps import Escalation
from tests.harness.repo import git
from tests.harness.task import (
    approve_and_summarize,
    done,
    explore,
    fix_the_bug,
    make_policy,
    run_ssw,
    tool,
    tried_plus_two,
    whole_fix,
)


def test_other_workers_calls_never_use_the_rungs_steps(tmp_path: Path, bug_repo: Path):
    # plan (large) and navigate/read (small) are not the mid rung's: its 3 steps are its run,
    # its edit and the edit's `done`, so it finishes the task without handing it over.
    replies = whole_fix()
    run = run_ssw(tmp_path, bug_repo, replies, policy=make_policy(limits={"steps_per_rung": 3}))

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.record.reason
    assert [e for e in run.events if isinstance(e, Escalation)] == []
    assert {s.model for s in run.of("edit")} == {"scripted-mid"}
    assert run.saved.totals.escalations == 0


def test_a_rung_that_spends_its_own_steps_hands_over_and_says_which_rule_fired(
    tmp_path: Path, bug_repo: Path
):
    replies = [
        *explore(),
        tool("read", path="calc/ops.py", expect="scripted-mid"),  # edit: the rung's 2nd step
        tool("read", path="calc/ops.py", expect="scripted-mid"),  # its 3rd: none left after
        *fix_the_bug(),  # the large rung takes the edit over
        *approve_and_summarize(),
    ]
    run = run_ssw(tmp_path, bug_repo, replies, policy=make_policy(limits={"steps_per_rung": 3}))

    assert (run.record.outcome, run.record.exit_code) == ("done", 0), run.record.reason
    [escalation] = [e for e in run.events if isinstance(e, Escalation)]
    assert (escalation.rule, escalation.to_worker) == ("rung_steps", "large")
    assert "used its 3 steps (edit, run and triage calls on it)" in escalation.reason
    assert [s.model for s in run.of("edit")][-2:] == ["scripted-large", "scripted-large"]


def test_gate_failures_escalate_under_their_own_rule(tmp_path: Path, bug_repo: Path):
    replies = [
        *explore(),
        *tried_plus_two(),
        tool("edit", path="calc/ops.py", old="+ 2)", new="+ 3)"),
        done("tried + 3"),
        done("the + n is the bug", expect="scripted-large"),
        tool("edit", path="calc/ops.py", old="(len(values) + 3)", new="len(values)"),
        done("divide by len(values)", expect="scripted-large"),
        *approve_and_summarize(),
    ]
    run = run_ssw(tmp_path, bug_repo, replies)

    [escalation] = [e for e in run.events if isinstance(e, Escalation)]
    assert escalation.rule == "gate_failures"
    assert (run.record.outcome, run.record.exit_code) == ("done", 0)


def test_a_run_whose_edits_change_nothing_ends_no_change_with_no_commit_and_no_review(
    tmp_path: Path, bug_repo: Path
):
    base = git(bug_repo, "rev-parse", "main").strip()
    stale = tool("edit", path="calc/ops.py", old="return total / count", new="return 0")
    replies = [
        *explore(),
        *[reply for _ in range(2) for reply in (stale, done("fixed", expect="scripted-mid"))],
        *[reply for _ in range(2) for reply in (stale, done("fixed", expect="scripted-large"))],
    ]
    run = run_ssw(tmp_path, bug_repo, replies)

    assert (run.record.outcome, run.record.exit_code) == ("no_change", 1), run.record.reason
    assert "changed no file 2 times on rung 1" in run.record.reason
    assert run.saved.commit is None and run.saved.changed_files == []
    assert run.reviews == [] and run.gates == []  # an empty diff is never gated or reviewed
    assert [e.rule for e in run.events if isinstance(e, Escalation)] == ["no_change"]
    # The branch holds no commit claiming a fix: it is where the run started.
    assert git(bug_repo, "rev-parse", run.record.branch).strip() == base
    assert all(c.refused for c in run.calls("edit"))
    # The editor is told its step changed nothing before it tries again.
    second_edit = run.of("edit")[2]
    assert second_edit.model == "scripted-mid"
    assert any("changed no file" in line for line in run.lines)


def test_runs_clean_removes_a_no_change_runs_branch_without_asking(tmp_path: Path, bug_repo: Path):
    stale = tool("edit", path="calc/ops.py", old="return total / count", new="return 0")
    replies = [*explore(), *[r for _ in range(4) for r in (stale, done("fixed"))]]
    run = run_ssw(tmp_path, bug_repo, replies)
    assert run.record.outcome == "no_change"

    cleaned = clean_run(bug_repo, find_run(bug_repo, run.record.run_id))

    assert cleaned.kept == []
    assert f"branch {run.record.branch}" in " ".join(cleaned.removed)
    assert run.record.branch not in git(bug_repo, "branch", "--list", "ssw/*")
