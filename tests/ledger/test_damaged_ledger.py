"""A ledger is never silently reset or read short (issue 22, ADR 0024): an empty, truncated,
garbage or damaged file (the main file or its -wal) is a one-line error with exit 2 through
`ssw ledger`, and a LedgerError through open_ledger (what `ssw run` and the bench open), and
the files are left byte for byte as they were. Reports open the ledger read-only and settle
nothing; a missing ledger is made only where none was."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from stepswitch.ledger import Budget, BudgetExceeded, LedgerError, open_ledger
from stepswitch.wire.types import Attempt, Usage
from tests.harness.cli import run_ssw_cli

from .conftest import intent, ok

ROOT = Path(__file__).resolve().parents[2]


def tally_path(ledger: Path) -> Path:
    return ledger.with_name(ledger.name + ".tally")  # the writes it counted (ADR 0024)


# A process that writes `calls` reserved-and-settled calls of run RUN; "killed" ends it the way
# SIGKILL does (no close: the -wal keeps the rows, nothing is checkpointed), "reserve" leaves
# its last call reserved and is killed too.
WRITER = """
import os, sys
from pathlib import Path
from stepswitch.ledger import open_ledger
from stepswitch.wire.types import Usage
from tests.ledger.conftest import intent, ok

path, run, calls, how = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
ledger = open_ledger(path)
for step in range(calls):
    reservation = ledger.reserve(intent(run_id=run, task_id=run, step=step), 1, 3000)
    if how != "reserve" or step < calls - 1:
        ledger.settle(reservation, ok(Usage(prompt_tokens=4000, completion_tokens=1000)))
if how in ("killed", "reserve"):
    os._exit(0)
ledger.close()
"""


def write(path: Path, run: str, calls: int, how: str = "closed") -> None:
    if how == "closed":  # in this process: the same writes, a closed ledger, no interpreter start
        with open_ledger(path) as ledger:
            for step in range(calls):
                reservation = ledger.reserve(intent(run_id=run, task_id=run, step=step), 1, 3000)
                ledger.settle(reservation, ok(Usage(prompt_tokens=4000, completion_tokens=1000)))
        return
    subprocess.run(
        [sys.executable, "-c", WRITER, str(path), run, str(calls), how],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )


def ssw_ledger(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_ssw_cli(["ledger", "--ledger", str(path), *args], cwd=ROOT, timeout=120)


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def assert_untouched(folder: Path, before: dict[str, bytes]) -> None:
    """The same files, byte for byte; a -shm is SQLite's index of the -wal, which any reader
    of a -wal may rebuild (it holds no row), so only its presence is compared."""
    after = files(folder)
    assert sorted(after) == sorted(before)
    for name, data in before.items():
        if not name.endswith("-shm"):
            assert after[name] == data, f"{name} changed"


def assert_one_line_exit_2(result: subprocess.CompletedProcess[str], *said: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    line = result.stderr.strip()
    assert line.startswith("ssw: ledger ") and "\n" not in line and "(fix: " in line
    for words in said:
        assert words in line


def refused_by_every_opener(path: Path, *said: str) -> None:
    """`ssw ledger` and open_ledger (ssw run, the bench) both refuse, and nothing changes."""
    before = files(path.parent)
    assert_one_line_exit_2(ssw_ledger(path), *said)
    with pytest.raises(LedgerError) as info:
        open_ledger(path)
    assert "\n" not in str(info.value) and all(words in str(info.value) for words in said)
    assert info.value.exit_code == 2
    assert_untouched(path.parent, before)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / ".ssw" / "ledger.sqlite"


# --- an emptied ledger is lost, never new ---


def test_a_ledger_truncated_to_0_bytes_is_refused_and_stays_0_bytes(path: Path):
    write(path, "run-1", 3)
    os.truncate(path, 0)
    refused_by_every_opener(path, "is empty (0 bytes)", "restore it from a copy")
    assert path.stat().st_size == 0


def test_an_emptied_ledger_without_its_tally_is_refused_too(path: Path):
    write(path, "run-1", 3)
    tally_path(path).unlink(missing_ok=True)  # as an earlier version left it: the file alone
    os.truncate(path, 0)
    refused_by_every_opener(path, "is empty (0 bytes)")


def test_an_emptied_ledger_does_not_give_its_budget_back(path: Path):
    budget = Budget("bench", "bench-1", 0.06)  # three calls of $0.018 are spent
    write(path, "run-1", 3)
    with open_ledger(path) as ledger, pytest.raises(BudgetExceeded):
        ledger.reserve(intent(budgets=(budget,)), 1, 3000)  # $0.02 more would pass $0.06
    os.truncate(path, 0)
    with pytest.raises(LedgerError, match="is empty"):
        open_ledger(path)  # before: a new ledger counting from $0 admitted the call
    assert path.stat().st_size == 0


def test_ssw_run_refuses_an_emptied_ledger_before_it_starts(tmp_path: Path):
    from tests.harness.repo import sample_repo
    from tests.harness.task import explore, run_ssw

    repo = sample_repo(tmp_path / "repo", "mean_bug")
    ledger = repo / ".ssw" / "ledger.sqlite"
    write(ledger, "run-1", 2)
    os.truncate(ledger, 0)
    with pytest.raises(LedgerError, match="is empty") as info:
        run_ssw(tmp_path, repo, [*explore()])
    assert info.value.exit_code == 2
    assert ledger.stat().st_size == 0
    assert not (repo / ".ssw" / "runs").exists() or not any((repo / ".ssw" / "runs").iterdir())


def test_a_deleted_ledger_is_not_made_again_where_its_tally_says_one_was(path: Path):
    write(path, "run-1", 3)
    path.unlink()
    before = files(path.parent)
    with pytest.raises(LedgerError, match=r"is missing, but its tally ledger\.sqlite\.tally"):
        open_ledger(path)
    assert_one_line_exit_2(ssw_ledger(path), "is missing, but its tally")
    assert_untouched(path.parent, before)
    assert not path.exists()


# --- truncated and garbage main files ---


@pytest.mark.parametrize("cut", ["half", "last page", "mid page"])
def test_a_truncated_ledger_is_refused_and_left_as_it_is(path: Path, cut: str):
    write(path, "run-1", 200)
    size = path.stat().st_size
    page = 4096
    assert size >= 8 * page
    keep = {"half": size // page // 2 * page, "last page": size - page, "mid page": size - 1000}
    os.truncate(path, keep[cut])
    refused_by_every_opener(path, "is damaged")


def test_garbage_over_a_ledger_is_refused(path: Path):
    write(path, "run-1", 3)
    path.write_bytes(b"this is not SQLite at all\n" * 400)
    refused_by_every_opener(path, "file is not a database")


def test_garbage_over_an_index_page_is_refused_though_every_row_still_reads(path: Path):
    write(path, "run-1", 200)
    with closing(sqlite3.connect(f"file:{path}?immutable=1", uri=True)) as raw:
        [(page,)] = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'calls_bench'")
        size = raw.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(path.read_bytes())
    data[(page - 1) * size : page * size] = bytes((i * 7919 + 13) % 251 for i in range(size))
    path.write_bytes(bytes(data))
    refused_by_every_opener(path, "is damaged", "quick_check")


# --- a damaged -wal: SQLite reads it up to the damage without a word ---


def _frames(wal: Path, page: int = 4096) -> int:
    return (wal.stat().st_size - 32) // (24 + page)


def _flip_last_frames(wal: Path, count: int, page: int = 4096) -> None:
    data = bytearray(wal.read_bytes())
    frames = _frames(wal, page)
    for frame in range(frames - count, frames):
        data[32 + frame * (24 + page) + 24 + 200] ^= 0xFF  # a byte of the frame's page
    wal.write_bytes(bytes(data))


def _sqlite_sees(path: Path, scratch: Path) -> int:
    """How many settled calls SQLite itself reads from a copy of the files (no ssw check)."""
    scratch.mkdir()
    for name in (path.name, path.name + "-wal"):
        shutil.copyfile(path.with_name(name), scratch / name)
    with closing(sqlite3.connect(scratch / path.name)) as raw:
        return int(raw.execute("SELECT COUNT(*) FROM calls WHERE status = 'settled'").fetchone()[0])


@pytest.mark.parametrize("flipped", [1, 3])
def test_a_damaged_wal_is_refused_not_read_short(path: Path, tmp_path: Path, flipped: int):
    write(path, "run-1", 3)  # checkpointed into the main file at close
    write(path, "run-2", 4, how="killed")  # the latest run's rows are in the -wal only
    wal = path.with_name(path.name + "-wal")
    assert _frames(wal) > flipped
    _flip_last_frames(wal, flipped)
    assert _sqlite_sees(path, tmp_path / "probe") < 7  # silently short, as SQLite reads it
    refused_by_every_opener(path, "has lost committed writes", "ledger.sqlite.tally")


def test_a_ledger_restored_from_an_older_copy_is_refused_until_accepted(path: Path):
    write(path, "run-1", 2)
    older = path.read_bytes()
    write(path, "run-2", 2)
    path.write_bytes(older)
    refused_by_every_opener(path, "has lost committed writes", "remove ledger.sqlite.tally")
    tally_path(path).unlink()  # the fix the message names: accept the file as it is
    with open_ledger(path) as ledger:
        assert {r.run_id for r in ledger.rows()} == {"run-1"}


def test_an_emptied_tally_is_refused_not_taken_as_none_yet(path: Path):
    """A tally is linked into place with its first record, so an empty one was emptied: it
    is refused and left empty, never rewritten (which would hide a restored ledger)."""
    write(path, "run-1", 2)
    older = path.read_bytes()
    write(path, "run-2", 2)
    path.write_bytes(older)  # the run-2 rows lost ...
    tally_path(path).write_bytes(b"")  # ... and the tally that would tell emptied
    refused_by_every_opener(path, "tally is empty", "remove ledger.sqlite.tally")
    assert tally_path(path).read_bytes() == b""


def test_no_reader_sees_a_tally_before_its_first_record(path: Path):
    with open_ledger(path):
        assert json.loads(tally_path(path).read_text())["writes"] >= 1
        assert [p.name for p in path.parent.iterdir() if p.name.endswith(".new")] == []


# --- reports are read-only ---


def test_ssw_ledger_creates_writes_and_settles_nothing(path: Path):
    write(path, "run-1", 2)
    write(path, "run-2", 2, how="reserve")  # killed mid-call: its last call stays reserved
    before = files(path.parent)
    stamp = path.stat().st_mtime_ns
    result = ssw_ledger(path)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("1 call(s) left open by a process that ended mid-call")
    assert "this report writes nothing" in first
    assert_untouched(path.parent, before)
    assert path.stat().st_mtime_ns == stamp
    with open_ledger(path) as ledger:  # the writers settle it
        assert [r.status for r in ledger.recovered] == ["bound"]


def test_ssw_ledger_on_a_closed_ledger_makes_no_wal_or_shm(path: Path):
    write(path, "run-1", 2)
    before = files(path.parent)
    stamp = path.stat().st_mtime_ns
    assert ssw_ledger(path, "--json").returncode == 0
    assert sorted(files(path.parent)) == ["ledger.sqlite", "ledger.sqlite.tally"]
    assert_untouched(path.parent, before)
    assert path.stat().st_mtime_ns == stamp


def _read_only_mount(folder: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """`command` with `folder` mounted read-only (bubblewrap): even root cannot write there."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed: no read-only mount to test with")
    mount = [bwrap, "--bind", "/", "/", "--ro-bind", str(folder), str(folder), "--dev", "/dev"]
    probe = subprocess.run(
        [*mount, "--", "sh", "-c", f"! touch {folder}/probe 2>/dev/null"], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"bubblewrap cannot make a read-only mount here: {probe.stderr!r}")
    return subprocess.run(
        [*mount, "--proc", "/proc", "--chdir", str(ROOT), "--", *command],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("state", ["closed", "killed", "wal without shm"])
def test_ssw_ledger_reads_a_ledger_on_a_read_only_mount(path: Path, state: str):
    write(path, "run-1", 2)
    if state != "closed":
        write(path, "run-2", 2, how="killed")
    if state == "wal without shm":
        path.with_name(path.name + "-shm").unlink()
    before = files(path.parent)
    command = [sys.executable, "-m", "stepswitch", "ledger", "--ledger", str(path), "--json"]
    result = _read_only_mount(path.parent, *command)
    assert result.returncode == 0, result.stderr
    assert '"calls": ' + ("2" if state == "closed" else "4") in result.stdout
    assert files(path.parent) == before


def test_an_earlier_versions_ledger_is_read_as_it_is_and_checked_from_its_first_write_open(
    path: Path, tmp_path: Path
):
    write(path, "run-1", 2)
    with closing(sqlite3.connect(path)) as raw:  # as the versions before the meta row left it
        raw.execute("DROP TABLE IF EXISTS ledger_meta")
        raw.commit()
    tally_path(path).unlink()
    before = files(path.parent)
    assert ssw_ledger(path).returncode == 0  # read as it is: no meta added by a report
    assert files(path.parent) == before
    with open_ledger(path) as ledger, closing(sqlite3.connect(path)) as raw:
        assert len(ledger.rows()) == 2
        [(origin, ledger_id)] = raw.execute("SELECT origin, ledger_id FROM ledger_meta")
    assert origin == "migrated"
    assert json.loads(tally_path(path).read_text())["ledger_id"] == ledger_id
    write(path, "run-2", 3, how="killed")
    _flip_last_frames(path.with_name(path.name + "-wal"), 1)
    refused_by_every_opener(path, "has lost committed writes")


def test_a_schema_1_ledger_is_reported_as_it_is_without_a_migration(path: Path):
    from .test_store import _version_1_file

    _version_1_file(path)  # schema 1: no served_model, over_usd or overrun columns yet
    before = files(path.parent)
    result = ssw_ledger(path, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["total"]["calls"] == 1
    assert files(path.parent) == before


# --- what the report counts ---


def _failed(ledger_path: Path) -> None:
    with open_ledger(ledger_path) as ledger:
        for status, error in ((400, "HTTP 400: content filter"), (429, "HTTP 429: slow down")):
            reservation = ledger.reserve(intent(), 1, 3000)
            ledger.settle(reservation, Attempt(1, status, error, 0.1, "req", None))
        ledger.settle(ledger.reserve(intent(), 2, 3000), ok(Usage(prompt_tokens=10)))


def test_ssw_ledger_counts_http_errors_as_errors(path: Path):
    _failed(path)
    result = ssw_ledger(path, "--json")
    assert result.returncode == 0, result.stderr
    total = json.loads(result.stdout)["total"]
    assert (total["calls"], total["errors"], total["lost"]) == (3, 2, 1)  # the 400 is a bound


def test_ssw_ledger_run_unknown_is_a_one_line_error(path: Path):
    write(path, "run-1", 1)
    assert_one_line_exit_2(ssw_ledger(path, "--run", "nope"), "holds no call of run 'nope'")
    assert ssw_ledger(path, "--run", "run-1").returncode == 0


@pytest.mark.slow
def test_a_bench_resume_refuses_an_emptied_ledger_instead_of_counting_from_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from stepswitch.bench import taskrun
    from stepswitch.bench.executor import inline_executor
    from stepswitch.bench.runner import BenchSpec, run_bench
    from stepswitch.bench.task import load_suite
    from tests.bench import write_task
    from tests.bench.fakes import FakeContestant
    from tests.harness.task import use_extra_models

    use_extra_models(monkeypatch, tmp_path)  # scripted-priced: a task run costs about $0.22
    for name in ("t1", "t2"):
        write_task(tmp_path, name)
    spec = BenchSpec(
        root=tmp_path / "runs" / "b1",
        tasks=load_suite(tmp_path / "suite"),
        contestants=[FakeContestant("a", "priced", model="scripted-priced")],
        budget_usd_total=0.3,
        workers=1,
    )
    assert run_bench(spec, executor=inline_executor, resamples=50).status == "budget_stop"
    for opened in taskrun._ledgers.values():  # a resume is a new process: nothing stays open
        opened.close()
    taskrun._ledgers.clear()
    ledger = spec.root / "ledger.sqlite"
    os.truncate(ledger, 0)
    with pytest.raises(LedgerError, match="is empty"):  # before: $0 counted, t2 ran again
        run_bench(spec, executor=inline_executor, resamples=50)
    assert ledger.stat().st_size == 0


def test_a_full_disk_during_a_ledger_write_says_the_disk_is_full_not_a_bad_ledger(
    tmp_path: Path,
) -> None:
    """SQLite's SQLITE_FULL (seen on a full tmpfs by the issue 22 campaign): the ledger is fine,
    the disk is not; the advice is to free space, never to move the ledger aside."""
    from stepswitch.ledger.store import LedgerError, guarded

    path = tmp_path / "ledger.sqlite"
    with pytest.raises(LedgerError) as caught, guarded(path):
        raise sqlite3.OperationalError("database or disk is full")
    assert "the disk is full" in str(caught.value) and "free space" in str(caught.value)
    assert "move the file aside" not in str(caught.value)
