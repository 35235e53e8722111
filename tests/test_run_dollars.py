"""Every dollar of a run in `ssw runs`, on the dashboard and in its record (issue 22, item 4): a
run killed with SIGKILL mid-call has no final totals and a call in flight, and a run interrupted
mid-call ends with a call in no step; the ledger holds both, as a range. Real `ssw run`
processes, killed or interrupted for real; `ssw runs` and `ssw ledger` run as the user runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stepswitch.records.money import format_usd
from stepswitch.site.serve import start_dashboard
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import sample_repo
from tests.harness.task import (
    every_worker,
    explore,
    make_policy,
    run_command,
    use_extra_models,
    wait_for_the_third_call,
)

from .site.test_serve import get

pytestmark = pytest.mark.slow


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    found.pop("SSW_LEDGER", None)  # the repository's own ledger, as `ssw run` there uses
    return found


def ssw(*args: str) -> subprocess.CompletedProcess[str]:
    return run_ssw_cli(args, env=env(), timeout=120)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    use_extra_models(monkeypatch, tmp_path)  # a priced scripted model: calls cost dollars
    yield sample_repo(tmp_path / "repo", "mean_bug")


def ledger_of(repo: Path) -> Path:
    return repo / ".ssw" / "ledger.sqlite"


def mid_call(repo: Path, tmp_path: Path, end: signal.Signals) -> str:
    """`ssw run` with two calls settled and the third in flight, ended by `end`; its run id."""
    plan, navigate, read, *_ = explore()
    replies = [plan, navigate, {**read, "delay_s": 300}]  # the third call hangs until the end
    policy = make_policy(workers=every_worker("scripted-priced"))
    command = run_command(tmp_path, repo, replies, policy=policy)
    process = subprocess.Popen(
        command,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    ledger = ledger_of(repo)
    try:
        wait_for_the_third_call(ledger, process)
        if end == signal.SIGKILL:
            os.killpg(process.pid, end)
        else:
            process.send_signal(end)  # as Ctrl-C: ssw ends the run and writes its record
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    [folder] = (repo / ".ssw" / "runs").iterdir()
    return folder.name


def ledger_total(repo: Path, run_id: str) -> tuple[float, float]:
    """What `ssw ledger --run ID` says the run cost: the account every report must agree with."""
    result = ssw("ledger", "--ledger", str(ledger_of(repo)), "--run", run_id, "--json")
    assert result.returncode == 0, result.stderr
    total = json.loads(result.stdout)["total"]
    return total["low_usd"], total["high_usd"]


def listed(repo: Path, run_id: str) -> dict[str, Any]:
    result = ssw("runs", "--repo", str(repo), "--json")
    assert result.returncode == 0, result.stderr
    return next(row for row in json.loads(result.stdout) if row["id"] == run_id)


def table_line(repo: Path, run_id: str) -> str:
    result = ssw("runs", "--repo", str(repo))
    assert result.returncode == 0, result.stderr
    return next(line for line in result.stdout.splitlines() if line.startswith(run_id))


def run_json(repo: Path, run_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".ssw" / "runs" / run_id / "run.json").read_text())
    return data


def test_a_run_killed_mid_call_shows_the_ledgers_range_in_ssw_runs_and_its_record(
    repo: Path, tmp_path: Path
) -> None:
    run_id = mid_call(repo, tmp_path, signal.SIGKILL)
    low, high = ledger_total(repo, run_id)
    assert 0 < low < high  # two calls settled, the third open up to its reservation

    row = listed(repo, run_id)
    assert row["outcome"] == "abandoned"
    assert row["dollars"] == pytest.approx({"low": low, "high": high})
    assert row["dollars_detail"]["open_calls"] == 1
    assert format_usd(low, high) in table_line(repo, run_id)

    cleaned = ssw("runs", "--repo", str(repo), "clean", "--all")
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    record = run_json(repo, run_id)  # the killed run's own record now carries the range
    assert record["outcome"] == "interrupted"
    assert record["totals"]["cost"] == pytest.approx({"low": low, "high": high})
    assert record["totals"]["ledger"] == pytest.approx({"low": low, "high": high})


def dashboard_pages(repo: Path, run_id: str) -> tuple[tuple[int, str], tuple[int, str]]:
    """The dashboard's front page and the run's replay page, as (status, html), from a server on
    the repository's records and ledger, stopped before the test reads them."""
    server = start_dashboard(repo / ".ssw" / "runs", ledger_of(repo), "127.0.0.1", 0)
    try:
        status, html, _ = get(server, "/")
        replay_status, replay, _ = get(server, f"/replay/{run_id}")
    finally:
        server.shutdown()
        server.server_close()
    return (status, html), (replay_status, replay)


def test_a_run_killed_mid_call_shows_the_ledgers_range_on_the_dashboard(
    repo: Path, tmp_path: Path
) -> None:
    run_id = mid_call(repo, tmp_path, signal.SIGKILL)
    low, high = ledger_total(repo, run_id)
    (status, html), (replay_status, replay) = dashboard_pages(repo, run_id)

    assert status == 200 and replay_status == 200
    past = html.split("id='past'")[1].split("id='ledger'")[0]
    row = next(r for r in past.split("<tr>") if run_id in r)
    assert "abandoned" in row and format_usd(low, high) in row
    assert format_usd(low, high) in replay


def test_an_interrupted_run_shows_the_call_in_flight_as_the_ledgers_range(
    repo: Path, tmp_path: Path
) -> None:
    run_id = mid_call(repo, tmp_path, signal.SIGINT)
    record = run_json(repo, run_id)
    assert record["outcome"] == "interrupted"
    low, high = ledger_total(repo, run_id)
    assert record["totals"]["cost"]["low"] == pytest.approx(low) and low < high

    row = listed(repo, run_id)
    assert row["dollars"] == pytest.approx({"low": low, "high": high})
    assert format_usd(low, high) in table_line(repo, run_id)
    (_, html), (_, replay) = dashboard_pages(repo, run_id)
    assert format_usd(low, high) in html.split("id='past'")[1].split("id='ledger'")[0]
    assert format_usd(low, high) in replay


def test_without_the_ledger_a_killed_run_says_ledger_not_read_never_a_silent_zero(
    repo: Path, tmp_path: Path
) -> None:
    run_id = mid_call(repo, tmp_path, signal.SIGKILL)
    ledger_of(repo).rename(tmp_path / "moved.sqlite")  # the folder read where its ledger is not
    for suffix in ("-wal", "-shm", ".tally"):
        moved = ledger_of(repo).with_name(ledger_of(repo).name + suffix)
        if moved.exists():
            moved.rename(tmp_path / f"moved.sqlite{suffix}")

    row = listed(repo, run_id)
    assert row["dollars_detail"]["note"] == "ledger not read"
    result = ssw("runs", "--repo", str(repo))
    line = next(x for x in result.stdout.splitlines() if x.startswith(run_id))
    assert "(ledger not read)" in line
    assert "ledger not read (ledger " in result.stdout and "no ledger at this path" in result.stdout
    assert not ledger_of(repo).exists()  # reading it made nothing

    elsewhere = ssw("runs", "--repo", str(repo), "--ledger", str(tmp_path / "moved.sqlite"))
    assert "ledger not read" not in elsewhere.stdout


def test_a_damaged_ledger_is_said_for_finished_runs_and_the_dashboard_will_not_start_on_it(
    repo: Path, tmp_path: Path
) -> None:
    run_id = mid_call(repo, tmp_path, signal.SIGINT)  # a run that ended and checked its record
    assert run_json(repo, run_id)["outcome"] == "interrupted"
    for suffix in ("-wal", "-shm"):
        ledger_of(repo).with_name(ledger_of(repo).name + suffix).unlink(missing_ok=True)
    ledger_of(repo).write_bytes(b"\x00\xff not a ledger " * 64)

    listed_runs = ssw("runs", "--repo", str(repo))
    assert listed_runs.returncode == 0, listed_runs.stderr
    assert f"ledger not read (ledger {ledger_of(repo)}" in listed_runs.stdout

    served = ssw("serve", "--runs", str(repo / ".ssw" / "runs"), "--ledger", str(ledger_of(repo)))
    assert served.returncode == 2 and "Traceback" not in served.stderr
    assert str(ledger_of(repo)) in served.stderr and len(served.stderr.strip().splitlines()) == 1
    assert ledger_of(repo).read_bytes().startswith(b"\x00\xff not a ledger")  # left as it was

    a_file = tmp_path / "runs.txt"
    a_file.write_text("not a folder")
    served = ssw("serve", "--runs", str(a_file))
    assert served.returncode == 2 and "--runs" in served.stderr and "not a folder" in served.stderr


def test_a_lost_ledger_is_said_by_ssw_runs_and_the_dashboard_will_not_start_without_it(
    repo: Path, tmp_path: Path
) -> None:
    run_id = mid_call(repo, tmp_path, signal.SIGINT)
    assert run_json(repo, run_id)["outcome"] == "interrupted"
    for suffix in ("", "-wal", "-shm"):  # the ledger lost; its tally, which counted it, stays
        ledger_of(repo).with_name(ledger_of(repo).name + suffix).unlink(missing_ok=True)
    assert ledger_of(repo).with_name(ledger_of(repo).name + ".tally").is_file()

    listed_runs = ssw("runs", "--repo", str(repo))
    assert listed_runs.returncode == 0, listed_runs.stderr
    assert "ledger not read (ledger " in listed_runs.stdout and "tally" in listed_runs.stdout

    served = ssw("serve", "--runs", str(repo / ".ssw" / "runs"), "--ledger", str(ledger_of(repo)))
    assert served.returncode == 2 and "tally" in served.stderr, served.stderr
    assert len(served.stderr.strip().splitlines()) == 1
    assert not ledger_of(repo).exists()  # refusing made nothing
