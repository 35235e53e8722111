"""Scratch folders in $TMPDIR (`ssw-home-*`, `ssw-bench-*`, `ssw-sandbox-root-*`, `ssw-git-*`)
hold their maker's lock: a `ssw run`, `ssw bench run` or any ssw process killed with SIGKILL
leaves them, and `ssw runs clean` removes them, never one whose maker still holds its lock, one
not yet given its owner file, or a link."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.bench.test_bench_signals import (
    bench,
    command_started,
    end_the_waiting_command,
    left_in,
    waiting_ladder,
)
from tests.harness.cli import run_ssw_cli, wait_for
from tests.harness.repo import git, sample_repo
from tests.harness.task import BUG_TASK, DEFAULT_POLICY, explore, write_policy, write_script

OWNER = ".ssw-owner"  # util/scratch.OWNER, spelled out: these tests also run against older code
ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def _gone(folder: Path) -> bool:
    """The folder's owner lock is free: its maker (and every process sharing it) has died."""
    if not (folder / OWNER).exists():
        return True  # code that makes no owner file: nothing to wait for
    fd = os.open(folder / OWNER, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def _made(tmpdir: Path, prefix: str) -> list[Path]:
    return [p for p in tmpdir.iterdir() if p.name.startswith(prefix)]


@contextlib.contextmanager
def _live_holder(tmpdir: Path) -> Iterator[Path]:
    """A folder whose owner lock a process that lives (this one) holds."""
    folder = tmpdir / "ssw-home-live"
    folder.mkdir()
    fd = os.open(folder / OWNER, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield folder
    finally:
        os.close(fd)


def _unfinished(tmpdir: Path) -> Path:
    """A folder still being made: no owner file yet, only the one being locked."""
    folder = tmpdir / "ssw-bench-making"
    folder.mkdir()
    (folder / (OWNER + ".new")).write_text("")
    return folder


def _runs_clean(repo: Path, tmpdir: Path) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmpdir)}
    return run_ssw_cli(["runs", "clean", "--all"], env=env, cwd=repo, timeout=120)


def _kill(process: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)


# --- the clean-up itself ---


def test_a_folder_made_here_holds_its_lock_and_is_removed_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stepswitch.util.scratch import clean_abandoned, owned_scratch

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads TMPDIR again
    with owned_scratch("ssw-bench-") as folder:
        assert folder.parent == tmp_path and (folder / OWNER).is_file()
        assert not (folder / (OWNER + ".new")).exists()
        assert not _gone(folder)
        assert clean_abandoned(tmp_path) == 0 and folder.is_dir()
    assert not folder.exists()


def test_clean_removes_only_real_folders_of_ours_whose_owner_is_gone(tmp_path: Path) -> None:
    from stepswitch.util.scratch import clean_abandoned

    dead = tmp_path / "ssw-home-dead"
    (dead / "tmp").mkdir(parents=True)
    (dead / OWNER).write_text("1\n")  # nobody holds it
    (dead / "tmp" / "link").symlink_to(tmp_path / "kept")  # removal does not follow links
    (tmp_path / "kept").mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / OWNER).write_text("")
    (tmp_path / "ssw-bench-link").symlink_to(target)  # a link named like ours
    other = tmp_path / "not-ssw"
    other.mkdir()
    (other / OWNER).write_text("")
    unfinished = _unfinished(tmp_path)
    with _live_holder(tmp_path) as live:
        assert clean_abandoned(tmp_path) == 1
        assert not dead.exists()
        assert live.is_dir() and unfinished.is_dir() and other.is_dir()
        assert (tmp_path / "ssw-bench-link").is_symlink() and (target / OWNER).exists()
        assert (tmp_path / "kept").is_dir()
    assert clean_abandoned(tmp_path) == 1  # the holder let go: now it is abandoned
    assert unfinished.is_dir()


# Held for a process's life, not a block.
PROCESS_PREFIXES = ("ssw-sandbox-root-", "ssw-git-", "ssw-test-config-")
# A process that makes all three (util/sandbox._stage, util/git_checkouts._scratch, the gates'
# folder of base configurations), says where, waits.
HOLDER = """
import sys, time
from stepswitch.gates.test_config import config_folder
from stepswitch.util.git_checkouts import _scratch
from stepswitch.util.sandbox import _stage
print(_stage(), _scratch(), config_folder(), flush=True)
if sys.argv[1] == "wait":
    time.sleep(600)
"""


@pytest.mark.parametrize("prefix", ["ssw-home-", "ssw-bench-", *PROCESS_PREFIXES])
def test_clean_removes_an_abandoned_folder_of_every_prefix(tmp_path: Path, prefix: str) -> None:
    from stepswitch.util.scratch import clean_abandoned

    dead = tmp_path / f"{prefix}dead"
    dead.mkdir()
    (dead / OWNER).write_text("1\n")  # nobody holds it
    with _live_holder(tmp_path) as live:
        assert clean_abandoned(tmp_path) == 1
        assert not dead.exists() and live.is_dir()


def _holder(tmpdir: Path, how: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, how],
        env={**ENV, "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmpdir)},
        stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def test_process_long_scratch_holds_its_lock_and_goes_at_exit(tmp_path: Path) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    process = _holder(tmpdir, "exit")
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    assert len(out.split()) == 3
    assert list(tmpdir.iterdir()) == []  # removed at the normal exit, as before


def test_a_killed_process_leaves_its_process_scratch_folders_and_clean_removes_them(
    tmp_path: Path,
) -> None:
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    process = _holder(tmpdir, "wait")
    try:
        assert process.stdout is not None
        folders = [Path(p) for p in process.stdout.readline().split()]
        assert [f.name[: len(p)] for f, p in zip(folders, PROCESS_PREFIXES, strict=True)] == list(
            PROCESS_PREFIXES
        )
        assert all(f.parent == tmpdir and f.is_dir() and not _gone(f) for f in folders)
        git(tmp_path, "init", "-q", "-b", "main")  # `ssw runs clean` works in a repository
        done = _runs_clean(tmp_path, tmpdir)  # its maker lives: both stay
        assert done.returncode == 0, done.stderr
        assert all(f.is_dir() for f in folders), done.stdout
        _kill(process)
    finally:
        if process.poll() is None:
            _kill(process)
    assert all(f.is_dir() for f in folders)  # SIGKILL: no exit handler ran
    wait_for(lambda: all(_gone(f) for f in folders), "the killed process's locks to be dropped")
    unfinished = _unfinished(tmpdir)
    with _live_holder(tmpdir) as live:
        done = _runs_clean(tmp_path, tmpdir)
        assert done.returncode == 0, done.stderr
        assert "removed 3 scratch folders" in done.stdout, done.stdout
        assert not any(f.exists() for f in folders)
        assert live.is_dir() and unfinished.is_dir()


# --- real runs killed with SIGKILL ---


def _ledger_rows(path: Path) -> int:
    if not path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as raw:
        try:
            return int(raw.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
        except sqlite3.OperationalError:  # the schema is not written yet
            return 0


@pytest.mark.slow
def test_a_killed_ssw_run_leaves_its_home_and_runs_clean_removes_it(tmp_path: Path) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    plan, *_ = explore()
    script = write_script(tmp_path, [{**plan, "delay_s": 300}])  # the first call hangs
    command = [
        sys.executable, "-m", "stepswitch", "run", str(repo), "--task", BUG_TASK,
        "--policy", str(write_policy(tmp_path, DEFAULT_POLICY)), "--script", str(script),
        "--sandbox", "none",
    ]  # fmt: skip
    env = {**ENV, "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmpdir)}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    ledger = repo / ".ssw" / "ledger.sqlite"
    try:
        wait_for(lambda: bool(_made(tmpdir, "ssw-home-")) and _ledger_rows(ledger) > 0, "the call")
        _kill(process)
    finally:
        if process.poll() is None:
            _kill(process)
    [home] = _made(tmpdir, "ssw-home-")
    wait_for(lambda: _gone(home), "the killed run's lock to be dropped")
    unfinished = _unfinished(tmpdir)
    with _live_holder(tmpdir) as live:
        done = _runs_clean(repo, tmpdir)
        assert done.returncode == 0, done.stderr
        # Its home, and the gates' folder of base configurations (issue 45: it survived).
        assert "removed 2 scratch folders" in done.stdout, done.stdout
        assert not home.exists() and not _made(tmpdir, "ssw-test-config-")
        assert live.is_dir() and unfinished.is_dir()


@pytest.mark.slow
def test_a_killed_bench_leaves_its_scratch_and_runs_clean_removes_it(tmp_path: Path) -> None:
    # The ladder's RUN step starts a command that waits: the bench is mid-run at the kill.
    mark, tmpdir = waiting_ladder(tmp_path), tmp_path / "tmp"
    first = bench(tmp_path, tmpdir)
    try:
        wait_for(lambda: command_started(mark), "the run command")
        _kill(first)
    finally:
        if first.poll() is None:
            _kill(first)
        end_the_waiting_command(mark)
    [scratch] = _made(tmpdir, "ssw-bench-")
    assert left_in(tmpdir) == [scratch.name]
    wait_for(lambda: _gone(scratch), "the killed worker's lock to be dropped")
    git(tmp_path, "init", "-q", "-b", "main")  # `ssw runs clean` works in a repository
    unfinished = _unfinished(tmpdir)
    with _live_holder(tmpdir) as live:
        done = _runs_clean(tmp_path, tmpdir)
        assert done.returncode == 0, done.stderr
        assert "removed 2 scratch folders" in done.stdout, done.stdout  # with the gates' configs
        assert not scratch.exists() and not _made(tmpdir, "ssw-test-config-")
        assert live.is_dir() and unfinished.is_dir()
