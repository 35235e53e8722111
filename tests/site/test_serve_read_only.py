"""`ssw serve` over a ledger a killed run left: the dashboard reads the ledger read-only and
settles nothing (the next writer does), and a run whose process is gone is marked abandoned at
once, from the run's lock the kernel drops, not after ten quiet minutes (issue 22)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stepswitch.ledger import open_ledger
from stepswitch.site.serve import DashboardServer, start_dashboard
from tests.ledger.test_damaged_ledger import assert_untouched, files, write

from .conftest import write_run
from .test_serve import get


@contextmanager
def dashboard(runs: Path, ledger: Path) -> Iterator[DashboardServer]:
    server = start_dashboard(runs, ledger, "127.0.0.1", 0)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _sections(server: DashboardServer) -> tuple[str, str, str]:
    status, html, _ = get(server, "/")
    assert status == 200
    live = html.split("id='live'")[1].split("id='past'")[0]
    past = html.split("id='past'")[1].split("id='ledger'")[0]
    return live, past, html.split("id='ledger'")[1]


def test_the_dashboard_settles_nothing_and_leaves_the_ledger_as_it_was(tmp_path: Path):
    ledger = tmp_path / "ledger" / "ledger.sqlite"
    write(ledger, "run-1", 2)
    write(ledger, "run-2", 2, how="reserve")  # killed mid-call: its last call stays reserved
    before = files(ledger.parent)
    with dashboard(tmp_path / "runs", ledger) as server:
        _, _, shown = _sections(server)
        _sections(server)  # a refresh
    assert (
        "<table class='ledger'>" in shown
        and "ranges: usage was lost or a call is still open" in shown
    )
    assert_untouched(ledger.parent, before)
    with open_ledger(ledger) as writer:  # still open: settling it is the writers' job
        assert [r.status for r in writer.recovered] == ["bound"]


def test_a_run_whose_process_is_gone_is_abandoned_at_once(tmp_path: Path):
    repo = tmp_path / "repo"
    run_id = "20261201-120000-live"
    write_run(repo / ".ssw" / "runs" / run_id, run_id=run_id, outcome="running")
    lock = repo / ".ssw" / "worktrees" / f"{run_id}.lock"
    lock.parent.mkdir(parents=True)
    held = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)  # as the live `ssw run` holds it
    os.write(held, f"{os.getpid()}\n".encode())
    with dashboard(repo / ".ssw" / "runs", tmp_path / "none.sqlite") as server:
        live, past, _ = _sections(server)
        assert run_id in live and ">running<" in live and run_id not in past
        os.close(held)  # the process ends: the kernel drops its lock
        live, past, _ = _sections(server)
    assert run_id not in live and run_id in past
    assert "abandoned: its ssw process is gone" in past
