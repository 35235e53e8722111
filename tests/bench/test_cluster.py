"""`ssw bench run --scheduler`: task runs on a real Dask LocalCluster of worker processes on
loopback. SCRIPTED: the policy contestant replays committed replies (claims/scripted/), its
workers playing list-priced models that nobody paid; these tests speak of the harness only."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import tomli_w
import yaml

from stepswitch.agent.workers import check_keys
from stepswitch.bench import journal
from stepswitch.bench.cluster_access import scheduler_access
from stepswitch.bench.contestants import BuiltinContestant, PolicyContestant
from stepswitch.bench.executor import inline_executor
from stepswitch.bench.plan import RunKey
from stepswitch.bench.runner import BenchResult, BenchSpec, run_bench
from stepswitch.bench.task import load_suite
from stepswitch.bench.travel import RemoteJob, TaskFiles, TravellingContestant
from stepswitch.errors import AuthError, UsageError
from stepswitch.ledger import open_ledger
from stepswitch.registry.presets import clear_cache, load_registry
from stepswitch.registry.trust import Trust
from tests.harness.cli import wait_for

distributed = pytest.importorskip("distributed")

from stepswitch.bench import cluster  # noqa: E402  (after the skip: it needs distributed)

REPO = Path(__file__).resolve().parents[2]
SCRIPTED = REPO / "claims/scripted"
TASK = REPO / "bench/suites/general/paginate-last-page"
CAP = 1.0  # dollars per task run: above its costliest call's bound ($0.23); it bills ~$0.013
ORACLE, NULL = BuiltinContestant("oracle"), BuiltinContestant("null")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The scripted registry of claims/scripted, with the shipped Token Factory preset beside
    it (a provider that needs a key), here and in the workers the clusters start."""
    root = tmp_path_factory.mktemp("registry")
    shutil.copytree(SCRIPTED / "registry", root, dirs_exist_ok=True)
    shutil.copy(REPO / "registry/providers/tokenfactory.toml", root / "providers")
    before = os.environ.get("SSW_REGISTRY")
    os.environ["SSW_REGISTRY"] = str(root)
    clear_cache()
    yield
    if before is None:
        os.environ.pop("SSW_REGISTRY", None)
    else:
        os.environ["SSW_REGISTRY"] = before
    clear_cache()


def local_cluster() -> Any:
    return distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    )


@pytest.fixture(scope="module")
def client(registry: None) -> Iterator[Any]:
    with local_cluster() as lc, distributed.Client(lc, set_as_default=False) as c:
        yield c


def ladder(folder: Path, name: str = "ladder", first_delay_s: float = 0.0) -> PolicyContestant:
    """The scripted as-if ladder with a per-run cap, and its replies (the first one late)."""
    folder.mkdir(parents=True, exist_ok=True)
    policy = tomllib.loads((SCRIPTED / "scripted-as-if-ladder.toml").read_text())
    policy["limits"]["budget_usd"] = CAP
    (folder / f"{name}.toml").write_text(tomli_w.dumps(policy))
    script = yaml.safe_load((SCRIPTED / "paginate-last-page.yaml").read_text())
    if first_delay_s:
        script["replies"][0]["delay_s"] = first_delay_s
    (folder / f"{name}.yaml").write_text(yaml.safe_dump(script, sort_keys=False))
    return PolicyContestant(name, str(folder / f"{name}.toml"), str(folder / f"{name}.yaml"))


def bench(root: Path, contestants: list, executor: Any, **options: Any) -> BenchResult:
    spec = BenchSpec(root=root, tasks=load_suite(TASK), contestants=contestants, **options)
    return run_bench(spec, executor=executor, resamples=100)


def calls(root: Path) -> list[tuple[Any, ...]]:
    with open_ledger(root / "ledger.sqlite", create=False) as ledger:
        rows = ledger.rows()
    return sorted(
        (r.run_id, r.step, r.worker, r.model, r.status, r.prompt_tokens, r.usd, r.pid) for r in rows
    )


def events(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / journal.JOURNAL).read_text().splitlines()]


@pytest.mark.slow
def test_a_scripted_bench_on_two_workers_equals_the_same_bench_run_here(
    client: Any, tmp_path: Path
) -> None:
    contestants = [ORACLE, NULL, ladder(tmp_path / "policy")]
    here = bench(tmp_path / "here" / "b1", contestants, inline_executor)
    there = bench(
        tmp_path / "there" / "b1", contestants, cluster.cluster_executor(client), workers=2
    )

    def graded(result: BenchResult) -> dict[str, tuple[Any, ...]]:
        return {
            r.contestant: (r.passed, r.outcome, r.dollars_low, r.dollars_high, r.reason)
            for r in result.rows
        }

    assert there.status == here.status == "complete"
    assert graded(there) == graded(here)
    assert graded(there)["ladder"][:2] == (True, "done") and graded(there)["ladder"][2] > 0
    mine, theirs = calls(here.root), calls(there.root)
    assert [c[:-1] for c in theirs] == [c[:-1] for c in mine]  # the same calls, billed the same
    assert {c[-1] for c in theirs} != {os.getpid()}  # made in the workers' processes
    for row in there.rows:  # the record folders came back whole
        folder = there.root / row.folder
        assert {"run.json", "steps.jsonl", "grade.json", "change.patch"} <= {
            p.name for p in folder.iterdir()
        }
    assert json.loads((there.root / "run.json").read_text())["sessions"][0]["executor"] == (
        "cluster"
    )


@pytest.mark.slow
def test_a_run_waits_until_its_cap_fits_beside_the_runs_out_and_the_total_holds(
    client: Any, tmp_path: Path
) -> None:
    first, second = ladder(tmp_path / "p", "first"), ladder(tmp_path / "p", "second")
    total = 1.5  # one cap out at a time; after one settles (~$0.013) the next fits
    result = bench(
        tmp_path / "b2",
        [first, second],
        cluster.cluster_executor(client),
        workers=2,
        budget_usd_total=total,
    )
    assert result.status == "complete" and [r.passed for r in result.rows] == [True, True]
    order = [(e["event"], e["contestant"]) for e in events(result.root)]
    assert order[1][0] == "finished" and order[2][0] == "started"  # never both out at once
    with open_ledger(result.root / "ledger.sqlite", create=False) as ledger:
        spend = ledger.spend("bench", "b2")
        assert not [r for r in ledger.rows() if r.provider == "cluster"]  # reservations gone
    assert spend.high <= total and spend.open_calls == 0


@pytest.mark.slow
def test_a_cap_that_never_fits_sends_nothing(client: Any, tmp_path: Path) -> None:
    result = bench(
        tmp_path / "b3",
        [ladder(tmp_path / "p")],
        cluster.cluster_executor(client),
        budget_usd_total=0.5,
    )
    assert (result.status, result.rows) == ("budget_stop", [])
    assert not (result.root / journal.JOURNAL).exists() or not events(result.root)


def _child_parent() -> int | None:
    """The worker process whose task run's process is running, found by its command line and
    its errors going to the running job's child.log (an idle one's went to a log now deleted)."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            output = os.readlink(proc / "fd" / "2")
        except OSError:
            continue
        if b"stepswitch.bench.cluster_child" in argv and output.endswith("child.log"):
            return int(argv[-2])
    return None


@pytest.mark.slow
def test_a_worker_killed_mid_run_costs_its_reservation_and_the_run_is_not_sent_again(
    registry: None, tmp_path: Path
) -> None:
    slow = ladder(tmp_path / "p", "slow", first_delay_s=120)
    with local_cluster() as lc, distributed.Client(lc, set_as_default=False) as c:
        found: list[BenchResult] = []
        runner = threading.Thread(
            target=lambda: found.append(
                bench(tmp_path / "b4", [slow], cluster.cluster_executor(c), workers=1)
            )
        )
        runner.start()
        wait_for(lambda: _child_parent() is not None, "the task run's process on a worker")
        worker = _child_parent()
        assert worker is not None
        os.kill(worker, signal.SIGKILL)
        runner.join(timeout=180)
        assert not runner.is_alive()
    (result,) = found
    (row,) = result.rows
    assert row.outcome == "harness_error" and "worker running it was lost" in row.reason
    assert (row.dollars_low, row.dollars_high) == (0.0, CAP)
    started = [e for e in events(result.root) if e["event"] == "started"]
    assert len(started) == 1  # sent once; the scheduler's second try refused itself
    with open_ledger(result.root / "ledger.sqlite", create=False) as ledger:
        (call,) = ledger.rows()
    assert (call.status, call.high_usd) == ("bound", CAP)


class _LostOnTheWay:
    """A Dask client whose every task's worker dies: the future it gives fails at once, as a
    real one does with KilledWorker (the real kill is the test above; this one is quick)."""

    class _Future:
        def result(self) -> None:
            raise RuntimeError("KilledWorker: the worker died")

        def add_done_callback(self, callback: Any) -> None:
            callback(self)

    def submit(self, *args: Any, **kwargs: Any) -> _Future:
        return self._Future()


def test_a_builtin_run_lost_with_its_worker_runs_again_on_resume_and_a_paid_one_never(
    registry: None, tmp_path: Path
) -> None:
    paid = ladder(tmp_path / "p")
    root = tmp_path / "b6"
    lost = bench(root, [ORACLE, paid], lambda workers: cluster.ClusterExecutor(_LostOnTheWay()))
    assert lost.status == "lost" and lost.exit_code == 1
    (row,) = lost.rows  # the paid run: counted at its whole cap, never sent again
    assert (row.contestant, row.outcome, row.dollars_high) == (paid.name, "harness_error", CAP)
    (released,) = [e for e in events(root) if e["event"] == "released"]
    assert released["contestant"] == "oracle" and "nothing was spent" in released["why"]
    with open_ledger(root / "ledger.sqlite", create=False) as ledger:
        assert [r.high_usd for r in ledger.rows()] == [CAP]  # the oracle's $0 reservation gone
    resumed = bench(root, [ORACLE, paid], inline_executor)
    assert resumed.status == "complete"
    assert sorted((r.contestant, r.passed) for r in resumed.rows) == [
        ("ladder", False),
        ("oracle", True),
    ]
    started = [e["contestant"] for e in events(root) if e["event"] == "started"]
    assert sorted(started) == ["ladder", "oracle", "oracle"]  # the paid run went out once


def test_a_worker_on_another_ssw_refuses_the_run(tmp_path: Path) -> None:
    (task,) = load_suite(TASK)
    job = RemoteJob(
        token="t",
        bench_id="b",
        key=RunKey("general/x", "o", 0),
        task=TaskFiles.of(task.folder, "general"),
        contestant=TravellingContestant.of(ORACLE),
        sandbox="auto",
        network=False,
        identity="ssw 0.0.0 (another build)",
    )
    outcome = cluster.run_on_worker(job)
    assert outcome.refused.startswith("it runs ssw ") and "another build" in outcome.refused
    assert outcome.row is None and not outcome.lost


def test_a_travelling_task_whose_files_changed_on_the_way_is_refused(tmp_path: Path) -> None:
    files = TaskFiles.of(TASK, "general")
    files.files["instruction.md"] = b"something else"
    with pytest.raises(ValueError, match="do not match their sha256"):
        files.unpack(tmp_path)


def test_a_scheduler_address_that_is_not_one_or_not_there_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(UsageError, match="give the scheduler's address, tls://HOST:PORT"):
        scheduler_access("127.0.0.1:8786", None)
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    with pytest.raises(UsageError, match=r"tcp://127\.0\.0\.1:9: cannot reach the scheduler"):
        cluster.connect(scheduler_access("tcp://127.0.0.1:9", None, insecure_loopback=True))


def test_a_policy_without_a_cap_cannot_go_to_a_cluster(tmp_path: Path) -> None:
    policy = PolicyContestant("plain", str(SCRIPTED / "scripted-as-if-ladder.toml"))
    with pytest.raises(UsageError, match=r"'plain' sets no \[limits\] budget_usd"):
        cluster.cap_usd(policy)
    assert cluster.cap_usd(ORACLE) == 0.0


def _worker_calls(bench_id: str, contestant: str) -> int:
    """The calls of `contestant`'s task runs out on this machine's workers, in their ledgers."""
    found = 0
    for path in Path(tempfile.gettempdir()).glob(f"ssw-cluster-*/bench/{bench_id}/ledger.sqlite"):
        with contextlib.suppress(sqlite3.Error):
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
                sql = "SELECT COUNT(*) FROM calls WHERE run_id LIKE ?"
                found += db.execute(sql, (f"%.{contestant}.%",)).fetchone()[0]
    return found


@pytest.mark.slow
def test_ctrl_c_stops_the_runs_on_the_workers_and_the_same_command_resumes(
    client: Any, tmp_path: Path
) -> None:
    slow = ladder(tmp_path / "p", "slow", first_delay_s=120)
    out = tmp_path / "b5"
    # The module's cluster: the interrupt ends the task run's process, never a worker.
    command = [
        sys.executable, "-m", "stepswitch", "bench", "run", "--suite", str(TASK),
        "--contestant", "oracle", "--contestant", slow.path, "--script", f"slow={slow.script}",
        "--scheduler", client.scheduler.address, "--insecure-loopback-scheduler",
        "--out", str(out), "--sandbox", "auto",
    ]  # fmt: skip
    first = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    wait_for(lambda: _worker_calls("b5", "slow") > 0, "the slow run's first call, on a worker")
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=180)
    assert first.returncode == 130, err
    assert _child_parent() is None  # nothing left running on the workers
    (slow_row,) = [
        e["row"] for e in events(out) if e["event"] == "finished" and e["contestant"] == "slow"
    ]
    assert slow_row["outcome"] == "interrupted" and "kept as a failure" in slow_row["reason"]
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    finished = [(e["contestant"]) for e in events(out) if e["event"] == "finished"]
    assert sorted(finished) == ["oracle", "slow"]  # each once: the interrupted run kept
    starts = [e["contestant"] for e in events(out) if e["event"] == "started"]
    assert starts.count("slow") == 1
    with open_ledger(out / "ledger.sqlite", create=False) as ledger:
        assert ledger.spend("bench", "b5").open_calls == 0
        assert not [r for r in ledger.rows() if r.status == "reserved"]


KEY = "SSW_TEST_CLUSTER_KEY"


def _own_environment(name: str) -> str | None:
    """Run on a worker: the variable in that process's environment."""
    return os.environ.get(name)


@pytest.mark.slow
def test_a_worker_started_without_keys_runs_a_policy_whose_provider_needs_one(
    registry: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key goes with the task run: the workers' environment never holds it."""
    keyed = tmp_path / "registry"
    shutil.copytree(os.environ["SSW_REGISTRY"], keyed)
    preset = keyed / "providers/scripted.toml"
    preset.write_text(f'api_key_env = "{KEY}"\n' + preset.read_text())
    monkeypatch.setenv("SSW_REGISTRY", str(keyed))
    monkeypatch.delenv(KEY, raising=False)
    monkeypatch.setenv("SSW_TEST_CLUSTER_MARK", "inherited")  # control: the probe sees env
    clear_cache()
    # The user trusts the loopback server with the key; the trust travels with the contestant.
    contestant = replace(ladder(tmp_path / "p"), trust=Trust.named(["127.0.0.1"]))
    try:
        with pytest.raises(AuthError, match=KEY):  # control: its provider needs the key
            check_keys(contestant.load_policy(), load_registry(), {})
        with local_cluster() as lc, distributed.Client(lc, set_as_default=False) as c:
            monkeypatch.setenv(KEY, "key-for-this-bench")  # here only, after the workers started
            result = bench(tmp_path / "b6", [contestant], cluster.cluster_executor(c), workers=1)
            held = c.run(_own_environment, KEY)
            marks = c.run(_own_environment, "SSW_TEST_CLUSTER_MARK")
            assert cluster.workers_holding_keys(c) == {}
    finally:
        clear_cache()
    (row,) = result.rows
    assert (row.outcome, row.passed) == ("done", True), row.reason
    assert set(marks.values()) == {"inherited"}
    assert set(held.values()) == {None}  # the workers' own environment: no key
    assert "key-for-this-bench" not in "".join(
        p.read_text(errors="replace") for p in result.root.rglob("*") if p.is_file()
    )
