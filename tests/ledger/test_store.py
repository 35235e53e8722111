"""The ledger file: WAL, a versioned schema, one-line errors for bad files that are never
recreated, and recovery of reservations whose process ended mid-call."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys

import pytest

from stepswitch.errors import UsageError
from stepswitch.ledger import (
    ORPHAN_ERROR,
    SCHEMA_VERSION,
    LedgerError,
    ledger_command,
    open_ledger,
)

from .conftest import WORKER_SCRIPT, intent


def test_a_new_ledger_is_made_with_its_folder_in_wal_mode(ledger_path):
    assert not ledger_path.parent.exists()
    with open_ledger(ledger_path) as ledger:
        assert ledger.recovered == []
    raw = sqlite3.connect(ledger_path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_reopening_keeps_the_rows(ledger_path):
    with open_ledger(ledger_path) as ledger:
        ledger.reserve(intent(), 1, 300)
    with open_ledger(ledger_path) as ledger:
        assert len(ledger.rows()) == 1  # this process is alive: its reservation stays open
        assert ledger.rows()[0].status == "reserved"


def test_a_corrupt_file_is_a_one_line_error_and_is_left_unchanged(ledger_path):
    ledger_path.parent.mkdir(parents=True)
    garbage = b"this is not SQLite at all\n" * 200
    ledger_path.write_bytes(garbage)
    with pytest.raises(LedgerError) as info:
        open_ledger(ledger_path)
    message = str(info.value)
    assert str(ledger_path) in message and "file is not a database" in message
    assert "\n" not in message and info.value.exit_code == 2
    assert isinstance(info.value, UsageError)
    assert ledger_path.read_bytes() == garbage
    assert sorted(p.name for p in ledger_path.parent.iterdir()) == ["ledger.sqlite"]


def test_another_sqlite_database_is_not_taken_over(ledger_path):
    ledger_path.parent.mkdir(parents=True)
    other = sqlite3.connect(ledger_path)
    other.execute("CREATE TABLE notes (text TEXT)")
    other.commit()
    other.close()
    with pytest.raises(LedgerError, match="not a stepswitch ledger"):
        open_ledger(ledger_path)
    names = sqlite3.connect(ledger_path).execute("SELECT name FROM sqlite_master").fetchall()
    assert names == [("notes",)]


def test_a_locked_ledger_is_a_one_line_error(ledger_path):
    open_ledger(ledger_path).close()
    holder = sqlite3.connect(ledger_path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(LedgerError, match="locked") as info:
            open_ledger(ledger_path, busy_timeout_s=0.1)
        assert str(ledger_path) in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    open_ledger(ledger_path).close()  # nothing was lost or recreated


def test_a_write_blocked_past_the_busy_timeout_is_a_ledger_error(ledger_path):
    ledger = open_ledger(ledger_path, busy_timeout_s=0.1)
    holder = sqlite3.connect(ledger_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(LedgerError, match="locked"):
            ledger.reserve(intent(), 1, 300)
    finally:
        holder.execute("ROLLBACK")
    ledger.reserve(intent(), 1, 300)
    ledger.close()


def test_a_newer_schema_is_refused(ledger_path):
    open_ledger(ledger_path).close()
    raw = sqlite3.connect(ledger_path)
    raw.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    raw.commit()
    raw.close()
    with pytest.raises(LedgerError, match="newer stepswitch") as info:
        open_ledger(ledger_path)
    assert "upgrade stepswitch" in str(info.value)


def test_the_report_never_creates_a_missing_ledger(ledger_path):
    with pytest.raises(LedgerError, match="no ledger at this path"):
        ledger_command(ledger_path, None, "model", False)
    assert not ledger_path.exists() and not ledger_path.parent.exists()


def _worker(ledger_path, action: str) -> subprocess.CompletedProcess[str]:
    """The ledger's worker script doing `action` on a ledger made here first."""
    open_ledger(ledger_path).close()
    command = [sys.executable, str(WORKER_SCRIPT), action, str(ledger_path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_a_reservation_left_by_a_dead_process_is_recovered_as_a_bound(ledger_path):
    child = _worker(ledger_path, "reserve-exit")
    assert child.returncode == 0, child.stderr
    left = json.loads(child.stdout)
    with open_ledger(ledger_path) as ledger:
        assert [r.id for r in ledger.recovered] == [left["row_id"]]
        row = ledger.recovered[0]
        assert row.status == "bound" and row.error == ORPHAN_ERROR
        assert row.low_usd == 0.0 and row.high_usd == row.reserved_usd > 0
        assert row.pid == left["pid"]
        assert ledger.recover_orphans() == []  # settled once
        assert ledger.spend("bench", "bench-1").high == pytest.approx(row.reserved_usd)


def test_reservations_survive_a_kill_minus_9_whether_fsynced_or_not(ledger_path):
    # A priced reservation is fsynced, a free one only written (ADR 0074): SIGKILL loses neither.
    child = _worker(ledger_path, "reserve-kill")
    assert child.returncode == -signal.SIGKILL, child.stderr
    left = json.loads(child.stdout)
    with open_ledger(ledger_path) as ledger:
        assert sorted(r.id for r in ledger.recovered) == sorted(left["rows"])
        paid, free = sorted(ledger.recovered, key=lambda r: r.id)
        assert paid.high_usd == paid.reserved_usd > 0
        assert not free.priced and free.worker == "free"


def _set(ledger_path, sql, *args):
    raw = sqlite3.connect(ledger_path)
    raw.execute(sql, args)
    raw.commit()
    raw.close()


def test_a_reservation_from_an_older_boot_is_recovered(ledger_path):
    with open_ledger(ledger_path) as ledger:
        ledger.reserve(intent(), 1, 300)
    _set(ledger_path, "UPDATE calls SET boot_id = 'an-older-boot'")
    with open_ledger(ledger_path) as ledger:
        assert len(ledger.recovered) == 1


def test_a_reused_pid_does_not_keep_a_reservation_open(ledger_path):
    with open_ledger(ledger_path) as ledger:
        ledger.reserve(intent(), 1, 300)
    _set(ledger_path, "UPDATE calls SET pid = 1, pid_start = 'not-init-start-time'")
    with open_ledger(ledger_path) as ledger:
        if os.path.exists("/proc/1/stat"):
            assert len(ledger.recovered) == 1


def test_reservations_of_live_processes_and_other_hosts_stay_open(ledger_path):
    with open_ledger(ledger_path) as ledger:
        ledger.reserve(intent(), 1, 300)
        ledger.reserve(intent(), 2, 300)
    _set(ledger_path, "UPDATE calls SET host = 'elsewhere', pid = 999999999 WHERE attempt = 2")
    assert socket.gethostname() != "elsewhere"
    with open_ledger(ledger_path) as ledger:
        assert ledger.recovered == []
        assert [r.status for r in ledger.rows()] == ["reserved", "reserved"]


def test_a_ledger_carried_across_fork_refuses_to_reserve(ledger):
    from dataclasses import replace

    ledger._me = replace(ledger._me, pid=ledger._me.pid + 1)  # as a forked child would see it
    with pytest.raises(RuntimeError, match="after fork"):
        ledger.reserve(intent(), 1, 300)


# --- schema 2: the served model (ADR 0009) ---


def _version_1_file(ledger_path, version=1, usd=0.002):
    """A ledger as schema `version` left it, with one settled row billed `usd` (reserved $0.01)."""
    from stepswitch.ledger.store import MIGRATIONS

    ledger_path.parent.mkdir(parents=True)
    raw = sqlite3.connect(ledger_path)
    raw.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    raw.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    for step in range(1, version + 1):
        for statement in MIGRATIONS[step]:
            raw.execute(statement)
    raw.execute(
        """INSERT INTO calls (status, run_id, task_id, step, step_type, worker, provider, model,
            attempt, priced, prompt_bytes, est_prompt_tokens, max_output_tokens, reserved_usd,
            usd, low_usd, high_usd, pid, host, reserved_at, settled_at)
        VALUES ('settled', 'run-old', 'task-1', 1, 'edit', 'coder', 'prov', 'model-a', 1, 1, 300,
            150, 1000, 0.01, ?, ?, ?, 1, 'h', 1.0, 2.0)""",
        (usd, usd, usd),
    )
    raw.commit()
    raw.close()


def test_a_schema_1_ledger_opens_migrated_with_its_rows_and_no_served_model(ledger_path):
    _version_1_file(ledger_path)
    with open_ledger(ledger_path) as ledger:
        [row] = ledger.rows()
        assert (row.run_id, row.usd, row.served_model) == ("run-old", 0.002, None)
        assert row.served_other_model is False
    raw = sqlite3.connect(ledger_path)
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    columns = [r[1] for r in raw.execute("PRAGMA table_info(calls)")]
    assert columns[-4:] == ["served_model", "over_usd", "overrun", "misreport"]


# --- schema 3: a settled call over its reservation, by how much and why (ADR 0013) ---


def test_a_schema_2_ledger_opens_migrated_and_its_overruns_are_still_reported(ledger_path):
    _version_1_file(ledger_path, version=2, usd=0.03)  # billed $0.03 against $0.01 reserved
    with open_ledger(ledger_path) as ledger:
        [row] = ledger.rows()
        assert (row.usd, row.over_usd, row.overrun) == (0.03, None, None)
        assert not row.over_reservation
    raw = sqlite3.connect(ledger_path)
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    text = ledger_command(ledger_path, None, "model", False)
    assert "1 call(s) cost more than their reservation, $0.0200 in all" in text


def _settled(ledger, served: str, **message: object):
    from stepswitch.wire.types import Attempt, Completion, FinishReason, Message, Usage

    reservation = ledger.reserve(intent(), 1, 300)
    completion = Completion(
        Message("assistant", "ok", **message),  # type: ignore[arg-type]
        FinishReason.STOP,
        "end_turn",
        Usage(prompt_tokens=100, cached_tokens=80, completion_tokens=5),
        served,
        "req-9",
        raw_usage={"input_tokens": 20, "cache_read_input_tokens": 80, "output_tokens": 5},
    )
    return ledger.settle(reservation, Attempt(1, 200, None, 0.2, "req-9", completion))


def test_settle_records_the_served_model_and_flags_another_model(ledger):
    same = _settled(ledger, "model-a-20260101")
    other = _settled(ledger, "gateway-default-model")
    unnamed = _settled(ledger, "")
    assert (same.served_model, same.served_other_model) == ("model-a-20260101", False)
    assert (other.served_model, other.served_other_model) == ("gateway-default-model", True)
    assert (unnamed.served_model, unnamed.served_other_model) == (None, False)
    assert [r.served_model for r in ledger.rows()] == [
        "model-a-20260101",
        "gateway-default-model",
        None,
    ]


def test_no_reasoning_state_reaches_the_ledger_row(ledger, ledger_path):
    from stepswitch.wire.types import ReasoningState

    secret = "ErUBCkYIBhgCIkCsig-never-in-the-ledger"
    payload = [{"at": 0, "part": {"type": "thinking", "thinking": "t", "signature": secret}}]
    state = ReasoningState.of("messages", "model-a", payload)
    row = _settled(ledger, "model-a", reasoning="t", reasoning_state=state)
    assert secret not in repr(row)
    raw = sqlite3.connect(ledger_path)
    stored = raw.execute("SELECT * FROM calls WHERE id = ?", (row.id,)).fetchall()
    assert stored and secret not in repr(stored)
