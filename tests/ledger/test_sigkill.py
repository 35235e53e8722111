"""A task killed with SIGKILL mid-call: every committed row survives, and the open reservation
is reported and settled as a bound on the next start."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.ledger import ORPHAN_ERROR, open_ledger

from .conftest import WORKER_SCRIPT, chat_body

GOOD_CALLS = 3
USAGE = {"prompt_tokens": 100, "completion_tokens": 40}


def wait_for(condition, what: str, limit_s: float = 30.0) -> None:
    """Poll until `condition()` holds; fail after `limit_s` rather than hang."""
    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def reserved_rows(path: Path) -> int:
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as raw:
        try:
            found = raw.execute("SELECT COUNT(*) FROM calls WHERE status = 'reserved'").fetchone()
        except sqlite3.OperationalError:  # the schema is not there yet
            return 0
    return int(found[0])


@pytest.mark.slow
def test_sigkill_mid_call_keeps_committed_rows_and_reports_the_open_reservation(tmp_path):
    path = tmp_path / "ledger.sqlite"
    held = threading.Event()

    def responder(request: RecordedRequest) -> Reply:
        step = int(request.json()["messages"][0]["content"].split()[0].split(":")[1])
        if step < GOOD_CALLS:
            return Reply(body=chat_body(USAGE))
        held.set()
        return Reply(body=chat_body(USAGE), delay_s=60)  # answered only after the kill

    cfg = {"ledger": str(path), "worker": "victim", "good_calls": GOOD_CALLS}
    with LoopbackServer(responder) as server:
        cfg["base_url"] = server.base_url
        child = subprocess.Popen(
            [sys.executable, str(WORKER_SCRIPT), "hang", json.dumps(cfg)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

        def mid_call() -> bool:
            if child.poll() is not None:
                pytest.fail(f"the child ended early: {child.communicate()[1].decode()[-3000:]}")
            return reserved_rows(path) == 1 and held.is_set()

        try:
            wait_for(mid_call, "the held call")
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL

    with open_ledger(path) as ledger:
        recovered = ledger.recovered
        rows = ledger.rows()
    assert len(recovered) == 1
    orphan = recovered[0]
    assert orphan.status == "bound" and orphan.error == ORPHAN_ERROR
    assert orphan.step == GOOD_CALLS and orphan.pid == child.pid
    assert orphan.low_usd == 0.0 and orphan.high_usd == orphan.reserved_usd > 0
    settled = [r for r in rows if r.status == "settled"]
    assert [r.step for r in settled] == list(range(GOOD_CALLS))
    assert all(r.usd == pytest.approx((100 * 2.0 + 40 * 10.0) / 1e6) for r in settled)
    assert all(r.prompt_tokens == 100 and r.completion_tokens == 40 for r in settled)
    assert len(rows) == GOOD_CALLS + 1
