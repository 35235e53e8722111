"""A run's provider calls as the ledger sees them, and `ssw ledger` over a real run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from stepswitch.agent.providers import HttpProviders
from stepswitch.fakes.scripted import Script, start_scripted_server
from stepswitch.ledger import Budget, open_ledger
from stepswitch.ledger.pricing import worst_case_usd
from stepswitch.policy.model import validate_policy
from stepswitch.records.folder import load_run
from stepswitch.records.steps import ModelStep
from stepswitch.registry.presets import Price, load_registry
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import sample_repo
from tests.harness.task import (
    approve_and_summarize,
    every_worker,
    explore,
    fix_the_bug,
    ledger_count,
    make_policy,
    run_command,
    run_ssw,
    run_with_passing_gates,
    wait_for_the_third_call,
    whole_fix,
)


def _usage(prompt_tokens: int, completion_tokens: int = 0) -> dict[str, Any]:
    return {"usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}


def test_every_model_step_of_a_run_is_a_ledger_row_with_its_dollars(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    policy = make_policy(workers=every_worker("scripted-priced"))
    replies = [{**r, **_usage(1_000, 100)} for r in [*explore(), *fix_the_bug()]]
    replies += [{**r, **_usage(1_000, 100)} for r in approve_and_summarize()]
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy)

    with open_ledger(bug_repo / ".ssw" / "ledger.sqlite") as ledger:
        rows = ledger.rows(run.record.run_id)
    assert [r.status for r in rows] == ["settled"] * len(run.model_steps)
    assert [r.step_type for r in rows] == [s.step_type for s in run.model_steps]
    assert all(r.usd == pytest.approx(0.011) for r in rows)  # 1,100 tokens at $10 per million
    assert run.record.cost.low == pytest.approx(0.011 * len(rows))
    assert run.record.cost.high == pytest.approx(run.record.cost.low)


def test_lost_usage_shows_as_a_range_in_the_bill_never_one_number(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    policy = make_policy(
        workers=every_worker("scripted-priced"),
        ledger={"on_lost_usage": "continue"},
    )
    first, *rest = whole_fix()
    replies = [{**first, "omit_usage": True}, *[{**r, **_usage(1_000)} for r in rest]]
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy)

    assert run.record.outcome == "done"
    plan = run.model_steps[0]
    assert plan.cost is not None and plan.cost.low == 0.0 and plan.cost.high > 0
    assert run.record.cost.high > run.record.cost.low
    bill = next(line for line in run.lines if line.startswith("bill: "))
    assert f"${run.record.cost.low:.4f}-${run.record.cost.high:.4f}" in bill


def test_ssw_ledger_reports_a_run_by_step_type_and_by_tag(tmp_path: Path, bug_repo: Path):
    replies = whole_fix()
    run = run_ssw(tmp_path, bug_repo, replies, tags=(("team", "search"),))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    ledger = str(bug_repo / ".ssw" / "ledger.sqlite")

    def ssw(*args: str) -> subprocess.CompletedProcess[str]:
        return run_ssw_cli(["ledger", "--ledger", ledger, *args], env=env, timeout=60)

    by_step = ssw("--run", run.record.run_id, "--by", "step_type", "--json")
    assert by_step.returncode == 0, by_step.stderr
    groups = json.loads(by_step.stdout)
    text = json.dumps(groups)
    for step_type in ("plan", "navigate", "read", "run", "edit", "review", "summarize"):
        assert step_type in text
    table = ssw("--by", "model")
    assert table.returncode == 0 and "scripted-large" in table.stdout
    by_tag = ssw("--by", "tag")
    assert by_tag.returncode == 0 and "team=search" in by_tag.stdout
    assert run.saved.tags == {"team": "search"}


def test_ssw_ledger_on_a_missing_file_says_so_and_creates_nothing(tmp_path: Path):
    missing = tmp_path / "nope" / "ledger.sqlite"
    result = run_ssw_cli(["ledger", "--ledger", str(missing)], timeout=60)
    assert result.returncode == 2
    assert "no ledger" in result.stderr
    assert not missing.exists() and not missing.parent.exists()


def test_a_corrupt_ledger_stops_the_run_before_it_starts_and_is_left_as_it_was(
    tmp_path: Path, bug_repo: Path
):
    path = bug_repo / ".ssw" / "ledger.sqlite"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(Exception) as info:
        run_ssw(tmp_path, bug_repo, [*explore()])
    assert getattr(info.value, "exit_code", None) == 2
    assert path.read_bytes() == b"this is not a database" * 100
    assert not (bug_repo / ".ssw" / "worktrees").exists() or not any(
        (bug_repo / ".ssw" / "worktrees").iterdir()
    )


@pytest.mark.slow
def test_a_run_killed_mid_call_keeps_its_rows_and_the_next_start_reports_the_open_call(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    import signal

    plan, navigate, read, *_ = explore()
    replies = [plan, navigate, {**read, "delay_s": 120}]  # the third call hangs until the kill
    policy = make_policy(workers=every_worker("scripted-priced"))
    ledger = bug_repo / ".ssw" / "ledger.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = run_command(tmp_path, bug_repo, replies, policy=policy)
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_the_third_call(ledger, process)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)

    assert ledger_count(ledger, "settled") == 2  # every committed row survived
    result = run_ssw_cli(["ledger", "--ledger", str(ledger), "--json"], env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["orphaned"]) == 1  # the open reservation, named; settled by a writer
    with open_ledger(ledger) as book:
        rows = book.rows()
    assert [r.status for r in rows] == ["settled", "settled", "bound"]
    open_call = rows[-1]
    assert open_call.reserved_usd > 0
    assert (open_call.low_usd, open_call.high_usd) == (0, open_call.reserved_usd)


# --- budgets that hold whatever the provider reports (ADR 0013) ---


def _priced(**extra: Any) -> dict[str, Any]:
    return make_policy(workers=every_worker("scripted-priced", **extra))


def test_a_provider_that_over_reports_prompt_tokens_stops_the_run_at_once_saying_by_how_much(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    # ~2.6 kB bodies bound the prompt at ~3,600 tokens; this provider bills 100,000 ($1.00).
    replies = [{**r, **_usage(100_000)} for r in [*explore(), *fix_the_bug()]]
    run = run_ssw(tmp_path, bug_repo, replies, policy=_priced(), budget_usd=0.5)

    with open_ledger(bug_repo / ".ssw" / "ledger.sqlite") as ledger:
        [row] = ledger.rows(run.record.run_id)  # no further call was made
    assert row.over_reservation and row.usd == pytest.approx(1.0)
    assert row.over_usd == pytest.approx(1.0 - row.reserved_usd)
    assert (run.record.outcome, run.record.exit_code) == ("limit", 1)
    assert run.record.reason == (
        f"scripted scripted-priced billed $1.0000 for step 1 (plan), ${row.over_usd:.4f} more "
        f"than the ${row.reserved_usd:.4f} reserved for it: 100,000 prompt tokens billed for a "
        f"bound of {row.est_prompt_tokens:,} ({row.prompt_bytes:,} request bytes + 1,024); "
        "stopped before any further call, so no budget is passed by more than this call's overrun"
    )
    assert run.saved.reason == run.record.reason
    assert f"limit: {run.record.reason}" in run.lines  # the bill's first line
    [step] = run.steps
    assert step.note == f"billed ${row.over_usd:.4f} above its reservation"
    # The $0.50 cap is passed by this one call's overrun and not a cent more.
    assert run.record.cost.high - (row.over_usd or 0.0) <= 0.5


def test_a_completion_far_above_max_tokens_stops_the_run_at_once(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    # A gateway that ignores the 2,048-token cap and bills 8,192 completion tokens.
    replies = [{**r, **_usage(2_000, 8_192)} for r in [*explore(), *fix_the_bug()]]
    run = run_ssw(tmp_path, bug_repo, replies, policy=_priced(), budget_usd=0.5)

    assert run.record.outcome == "limit" and len(run.steps) == 1
    assert "8,192 completion tokens billed for a cap of 2,048 (max_output_tokens)" in (
        run.record.reason
    )
    assert "more than the $" in run.record.reason and "reserved for it" in run.record.reason


def test_a_budget_under_the_floor_refuses_the_first_call_naming_what_to_change(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    # The plan's ~2.6 kB prompt bound costs ~$0.036 at $10 a million: what is left of $0.045
    # fits a few hundred output tokens, under the 1,024-token floor.
    run = run_ssw(tmp_path, bug_repo, explore(), policy=_priced(), budget_usd=0.045)

    assert (run.record.outcome, run.record.exit_code) == ("limit", 1)
    reason = run.record.reason
    assert reason.startswith("refused a call before sending it: it could cost up to $")
    assert "the task budget" in reason and "of $0.045 already has $0.0000 counted" in reason
    assert "scripted scripted-priced (plan step 1) reserves a bound of" in reason
    assert "and 2,048 output tokens at list price" in reason
    assert "under the floor of 1,024 ([limits] min_output_tokens)" in reason
    assert "raise --budget-usd (or [limits] budget_usd) to at least $" in reason
    assert "or lower [limits] min_output_tokens to" in reason
    [step] = run.steps
    assert step.attempts == 0 and step.error == reason
    with open_ledger(bug_repo / ".ssw" / "ledger.sqlite") as ledger:
        assert ledger.rows() == []  # nothing left the machine


def test_a_cap_the_budget_cannot_fit_is_lowered_in_the_request_actually_sent(
    tmp_path: Path, extra_models: Path
):
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    policy = validate_policy(_priced(max_output_tokens=100_000), "test-policy.toml")
    replies = whole_fix()
    script = Script.model_validate({"replies": [{**r, **_usage(1_000, 100)} for r in replies]})
    server, _ = start_scripted_server(script)
    providers = HttpProviders(load_registry(), base_urls={"scripted": server.base_url})
    limit = 0.5  # 100,000 output tokens alone would reserve $1.00 at $10 a million
    try:
        budgets = (Budget("task", "t1", limit),)
        record, rows = run_with_passing_gates(tmp_path, repo, policy, providers, budgets)
    finally:
        providers.close()
        server.stop()

    assert record.outcome == "done"
    sent = [r.json()["max_tokens"] for r in server.requests]
    assert sent == [r.max_output_tokens for r in rows] and len(sent) == len(replies)
    counted = 0.0
    for row in rows:  # each cap is the largest whose worst case fit what was left
        price = Price.model_validate(row.price)
        cap = row.max_output_tokens
        assert 1_024 <= cap < 100_000
        assert counted + worst_case_usd(price, row.est_prompt_tokens, cap) <= limit
        refused_bound = row.est_prompt_tokens + len("100000") - len(str(cap))  # a digit longer
        assert counted + worst_case_usd(price, refused_bound, cap + 1) > limit
        counted += row.usd or 0.0
    steps = load_run(tmp_path / "records").steps
    plan = next(s for s in steps if getattr(s, "step_type", None) == "plan")
    assert plan.note == (
        f"output cap lowered from 100,000 to {sent[0]:,} tokens to fit the task budget (t1) of $0.5"
    )
    # Each step's record says the cap its call was sent with, the lowered one.
    assert [s.max_output_tokens for s in steps if isinstance(s, ModelStep)] == sent
