"""A run's provider calls as the ledger sees them, and `ssw ledger` over a real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stepswitch.ledger import open_ledger

from .conftest import (
    WORKERS,
    approve_and_summarize,
    explore,
    fix_the_bug,
    make_policy,
    run_ssw,
    worker,
)


def _usage(prompt_tokens: int, completion_tokens: int = 0) -> dict[str, Any]:
    return {"usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}


def test_every_model_step_of_a_run_is_a_ledger_row_with_its_dollars(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    policy = make_policy(workers={name: worker("scripted-priced") for name in WORKERS})
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
        workers={name: worker("scripted-priced") for name in WORKERS},
        ledger={"on_lost_usage": "continue"},
    )
    first, *rest = [*explore(), *fix_the_bug(), *approve_and_summarize()]
    replies = [{**first, "omit_usage": True}, *[{**r, **_usage(1_000)} for r in rest]]
    run = run_ssw(tmp_path, bug_repo, replies, policy=policy)

    assert run.record.outcome == "done"
    plan = run.model_steps[0]
    assert plan.cost is not None and plan.cost.low == 0.0 and plan.cost.high > 0
    assert run.record.cost.high > run.record.cost.low
    bill = next(line for line in run.lines if line.startswith("bill: "))
    assert f"${run.record.cost.low:.4f}-${run.record.cost.high:.4f}" in bill


def test_ssw_ledger_reports_a_run_by_step_type_and_by_tag(tmp_path: Path, bug_repo: Path):
    replies = [*explore(), *fix_the_bug(), *approve_and_summarize()]
    run = run_ssw(tmp_path, bug_repo, replies, tags=(("team", "search"),))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    ledger = str(bug_repo / ".ssw" / "ledger.sqlite")

    def ssw(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "stepswitch", "ledger", "--ledger", ledger, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

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
    result = subprocess.run(
        [sys.executable, "-m", "stepswitch", "ledger", "--ledger", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
    )
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


def _count(path: Path, status: str) -> int:
    import contextlib
    import sqlite3

    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as raw:
        try:
            query = "SELECT COUNT(*) FROM calls WHERE status = ?"
            return int(raw.execute(query, (status,)).fetchone()[0])
        except sqlite3.OperationalError:  # the schema is not written yet
            return 0


@pytest.mark.slow
def test_a_run_killed_mid_call_keeps_its_rows_and_the_next_start_reports_the_open_call(
    tmp_path: Path, bug_repo: Path, extra_models: Path
):
    import signal
    import time

    from .conftest import BUG_TASK, write_policy, write_script

    plan, navigate, read, *_ = explore()
    replies = [plan, navigate, {**read, "delay_s": 120}]  # the third call hangs until the kill
    policy = make_policy(workers={name: worker("scripted-priced") for name in WORKERS})
    ledger = bug_repo / ".ssw" / "ledger.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = [
        sys.executable,
        "-m",
        "stepswitch",
        "run",
        str(bug_repo),
        "--task",
        BUG_TASK,
        "--policy",
        str(write_policy(tmp_path, policy)),
        "--script",
        str(write_script(tmp_path, replies)),
    ]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (_count(ledger, "settled") == 2 and _count(ledger, "reserved") == 1):
            assert process.poll() is None, "ssw run ended before the hanging call"
            assert time.monotonic() < deadline, "the third call never started"
            time.sleep(0.05)  # polling a file another process writes; the check is the condition
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)

    assert _count(ledger, "settled") == 2  # every committed row survived
    result = subprocess.run(
        [sys.executable, "-m", "stepswitch", "ledger", "--ledger", str(ledger), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["recovered"]) == 1  # the open reservation, reported on the next start
    with open_ledger(ledger) as book:
        rows = book.rows()
    assert [r.status for r in rows] == ["settled", "settled", "bound"]
    open_call = rows[-1]
    assert open_call.reserved_usd > 0
    assert (open_call.low_usd, open_call.high_usd) == (0, open_call.reserved_usd)
