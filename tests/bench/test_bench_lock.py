"""One writer per bench folder (issue 45): a second `ssw bench run` into a folder another bench is
writing is refused in one line naming the holder's pid, before it opens the ledger or runs a
task; the first bench goes on and its dollars equal its ledger's; a lock left by a dead bench is
taken over, and said."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w
import yaml

from stepswitch.bench.folder_lock import LOCK_FILE
from tests.harness.cli import run_ssw_cli, wait_for
from tests.harness.task import every_worker, make_policy, use_extra_models

from . import write_task
from .test_cli_bench import SCRIPT, _tool

ARGS = [
    "bench", "run", "--suite", "suite", "--contestant", "ladder.toml", "--script",
    "ladder=script.yaml", "--out", "runs/b1", "--sandbox", "none",
]  # fmt: skip


def _setup(work: Path, mp: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, str]]:
    """A priced ladder whose RUN step touches a mark, then waits on a FIFO until the test writes
    to it; returns the mark, the FIFO and the environment (a registry with a priced model)."""
    write_task(work, "t1")
    mark, gate = work / "run-started", work / "release.fifo"
    os.mkfifo(gate)
    waits = [_tool("run", command=f"touch {mark}; cat {gate}"), SCRIPT[3]]
    replies = [*SCRIPT[:3], *waits, *SCRIPT[4:]]
    policy = make_policy(workers=every_worker("scripted-priced"))
    (work / "ladder.toml").write_text(tomli_w.dumps(policy))
    (work / "script.yaml").write_text(yaml.safe_dump({"replies": replies}))
    use_extra_models(mp, work)  # SSW_REGISTRY: the registry with scripted-priced
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return mark, gate, {**env, "PYTHONDONTWRITEBYTECODE": "1"}


@pytest.mark.slow
def test_a_second_bench_into_a_folder_being_written_is_refused_naming_the_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    mark, gate, env = _setup(tmp_path, monkeypatch)
    first = subprocess.Popen(
        [sys.executable, "-m", "stepswitch", *ARGS], cwd=tmp_path, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        wait_for(mark.exists, "the first bench's run command starting")
        second = run_ssw_cli(ARGS, cwd=tmp_path, env=env, timeout=120)
        assert second.returncode == 2, second.stderr
        assert second.stderr.strip() == (
            f"ssw: another `ssw bench run` (pid {first.pid}) is writing "
            f"{(tmp_path / 'runs' / 'b1').resolve()}: wait for it to end, or give this one "
            "another --out"
        )
        with gate.open("w") as release:  # the first bench's run command ends
            release.write("go\n")
        _, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 0, err

    bench = tmp_path / "runs" / "b1"
    summary = json.loads((bench / "summary.json").read_text())
    assert summary["task_runs"] == 1  # once, not twice
    spent = summary["contestants"]["ladder"]["all"]["dollars_total"]
    ledger = run_ssw_cli(
        ["ledger", "--ledger", str(bench / "ledger.sqlite"), "--json"], cwd=tmp_path, env=env
    )
    assert ledger.returncode == 0, ledger.stderr
    booked = json.loads(ledger.stdout)
    assert spent["high"] > 0
    assert spent["high"] == pytest.approx(booked["total"]["high_usd"])
    assert spent["low"] == pytest.approx(booked["total"]["low_usd"])
    assert (bench / LOCK_FILE).read_text() == ""  # an ended bench names no holder


def test_a_lock_left_by_a_dead_bench_is_taken_over_and_said(tmp_path: Path):
    write_task(tmp_path, "t1")
    bench = tmp_path / "runs" / "b1"
    bench.mkdir(parents=True)
    (bench / LOCK_FILE).write_text("4194301\n")  # no process holds its lock
    args = ["bench", "run", "--suite", "suite", "--contestant", "null", "--out", "runs/b1"]
    done = run_ssw_cli(args, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert f"took over {bench.resolve()}'s lock, left by pid 4194301, which no longer runs" in said
