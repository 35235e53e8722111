"""`ssw serve` on a bench whose task run is "running": abandoned at once when the process that ran
it is gone, from the owner lock of the scratch folder its journal line names (the kernel drops it
at a kill -9), not "running?" after ten quiet minutes; running while the lock is held."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bench.test_bench_signals import (
    bench,
    command_started,
    end_the_waiting_command,
    waiting_ladder,
)
from tests.harness.cli import wait_for

from .conftest import write_bench, write_run
from .test_serve_read_only import _sections, dashboard

OWNER = ".ssw-owner"  # util/scratch.OWNER, spelled out: these tests also run against older code
TASK = "general/mean_bug"
RUN_ID = f"bench1.{TASK.replace('/', '.')}.ladder.0"
ABANDONED = "abandoned: its ssw process is gone"
# A process that makes a scratch folder as util/scratch.owned_scratch does, holds its lock, waits.
HOLDER = """
import fcntl, os, sys, time
folder = sys.argv[1]
os.mkdir(folder)
fd = os.open(os.path.join(folder, ".ssw-owner"), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""


def _bench_running(runs: Path, scratch: Path | str | None, pid: int = 999_999) -> Path:
    """A bench folder whose ladder task run says running; its journal's `started` line names
    `scratch` (none: a journal from before `scratch` was written; a str: its name alone, as the
    journal writes it now) and the worker's `pid`."""
    root = write_bench(runs / "bench1", results=False, summary=False, tasks=(TASK,))
    folder = root / "tasks" / TASK / "ladder" / "0"
    shutil.rmtree(folder)
    write_run(folder, run_id=RUN_ID, contestant="ladder", bench_id="bench1", outcome="running")
    started = {"event": "started", "task": TASK, "contestant": "ladder", "attempt": 0}
    started |= {"run_id": RUN_ID, "pid": pid, "at": "2026-12-01T10:00:00+00:00"}
    if scratch is not None:
        started["scratch"] = str(scratch)
    (root / "journal.jsonl").write_text(json.dumps(started) + "\n")
    return root


def _shown(runs: Path, tmp_path: Path) -> tuple[str, str]:
    with dashboard(runs, tmp_path / "none.sqlite") as server:
        live, past, _ = _sections(server)
    return live, past


def _assert_running(live: str, past: str) -> None:
    assert "bench1" in live and ">running<" in live and "bench1" not in past


def _assert_abandoned(live: str, past: str) -> None:
    assert "bench1" not in live and "bench1" in past and ABANDONED in past


@contextlib.contextmanager
def _killed_holder(scratch: Path) -> Iterator[None]:
    """The scratch folder's owner took its lock, then was killed with SIGKILL."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(scratch)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
    finally:
        child.kill()
        child.wait(timeout=60)
    yield


def test_a_bench_task_run_whose_owner_lives_is_running(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp" / "ssw-bench-live"
    scratch.mkdir(parents=True)
    runs = tmp_path / "runs"
    _bench_running(runs, scratch)
    held = os.open(scratch / OWNER, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # as the live worker holds it
        _assert_running(*_shown(runs, tmp_path))
        _assert_running(*_shown(runs, tmp_path))  # the dashboard's look let go of the lock
    finally:
        os.close(held)
    _assert_abandoned(*_shown(runs, tmp_path))  # the worker ended without a journal line


def test_a_bench_task_run_whose_owner_was_killed_is_abandoned_at_once(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp" / "ssw-bench-dead"
    scratch.parent.mkdir()
    runs = tmp_path / "runs"
    _bench_running(runs, scratch)
    with _killed_holder(scratch):
        assert (scratch / OWNER).is_file()
        _assert_abandoned(*_shown(runs, tmp_path))
    shutil.rmtree(scratch)  # `ssw runs clean` removed what it left
    _assert_abandoned(*_shown(runs, tmp_path))


def test_a_scratch_named_alone_is_found_in_the_temporary_folder_or_asked_of_its_process(
    tmp_path: Path,
) -> None:
    """The journal names its scratch folder alone (it is committed with the bench, and names no
    machine path): the dashboard looks in its own temporary folder, and where the folder is not
    there (cleaned, or another $TMPDIR) asks whether the worker's process lives."""
    runs = tmp_path / "runs"
    scratch = Path(tempfile.mkdtemp(prefix="ssw-bench-"))
    try:
        _bench_running(runs, scratch.name)
        held = os.open(scratch / OWNER, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
            _assert_running(*_shown(runs, tmp_path))
        finally:
            os.close(held)
        _assert_abandoned(*_shown(runs, tmp_path))
    finally:
        shutil.rmtree(scratch)
    shutil.rmtree(runs)
    _bench_running(runs, "ssw-bench-elsewhere", pid=os.getpid())  # not here, its process lives
    _assert_running(*_shown(runs, tmp_path))
    shutil.rmtree(runs)
    _bench_running(runs, "ssw-bench-elsewhere")  # not here, its process gone
    _assert_abandoned(*_shown(runs, tmp_path))


def test_a_journal_without_scratch_or_naming_no_bench_scratch_stays_running(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    _bench_running(runs, None)
    _assert_running(*_shown(runs, tmp_path))
    shutil.rmtree(runs)
    _bench_running(runs, tmp_path / "missing-but-not-ssw")  # not a name ssw gives its scratch
    _assert_running(*_shown(runs, tmp_path))


@pytest.mark.slow
def test_a_real_bench_killed_mid_run_is_abandoned_on_the_dashboard_at_once(
    tmp_path: Path,
) -> None:
    # The ladder's RUN step starts a command that waits: the bench is mid-run at the kill.
    mark, tmpdir = waiting_ladder(tmp_path), tmp_path / "tmp"
    first = bench(tmp_path, tmpdir)
    try:
        wait_for(lambda: command_started(mark), "the run command")
        with dashboard(tmp_path / "runs", tmp_path / "none.sqlite") as server:
            live, past = _sections(server)[:2]
        assert "b1" in live and ">running<" in live and "b1" not in past
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=60)
        end_the_waiting_command(mark)
    with dashboard(tmp_path / "runs", tmp_path / "none.sqlite") as server:
        wait_for(  # the kernel drops the lock once the worker and its children are gone
            lambda: ABANDONED in _sections(server)[1], "the dashboard to say abandoned"
        )
        live, past = _sections(server)[:2]
    assert "b1" not in live and "b1" in past
