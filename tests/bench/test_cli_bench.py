"""`ssw bench run` and `ssw bench summary` as a user runs them: a real process, the built-ins and
a policy on the scripted provider (its loopback server per task run), JSON for machines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w
import yaml
from typer.testing import CliRunner

from stepswitch.cli.bench import bench_app, default_out
from stepswitch.errors import UsageError
from tests.agent.conftest import DEFAULT_POLICY

from . import write_task

FIX = {"path": "calc.py", "old": "    return a - b", "new": "    return a + b"}


def _tool(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def _verdict() -> dict:
    return {"content": json.dumps({"verdict": "approve", "reasons": "adds"})}


SCRIPT = [
    *[_tool("done", summary=s) for s in ("plan", "calc.py", "add subtracts", "ran")],
    _tool("edit", **FIX),
    _tool("done", summary="add adds"),
    _verdict(),
    _verdict(),
    _tool("done", summary="Fix add\n\nIt subtracted."),
]


def ssw(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stepswitch", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


@pytest.mark.slow
def test_bench_run_with_a_scripted_policy_then_summary_then_the_same_command_again(
    tmp_path: Path,
):
    write_task(tmp_path, "t1")
    (tmp_path / "ladder.toml").write_text(tomli_w.dumps(DEFAULT_POLICY))
    (tmp_path / "script.yaml").write_text(yaml.safe_dump({"replies": SCRIPT}))
    args = [
        "bench", "run", "--suite", "suite", "--contestant", "ladder.toml",
        "--contestant", "null", "--script", "ladder=script.yaml", "--out", "runs/b1", "--json",
    ]  # fmt: skip
    done = ssw(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    ladder = summary["contestants"]["ladder"]
    assert (ladder["kind"], ladder["all"]["passed"], ladder["all"]["steps_per_task_run"]) == (
        "policy",
        1,
        9,
    )
    assert summary["contestants"]["null"]["all"]["passed"] == 0
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    runs = [e for e in events if e["event"] == "task_run"]
    assert [(e["contestant"], e["passed"]) for e in runs] == [("ladder", True), ("null", False)]
    record = json.loads((tmp_path / "runs" / "b1" / "run.json").read_text())
    [ladder_record] = [c for c in record["contestants"] if c["name"] == "ladder"]
    assert (ladder_record["policy_path"], ladder_record["script"]) == ("ladder.toml", "script.yaml")
    assert record["command"][:3] == ["ssw", "bench", "run"]
    assert record["suites"][0]["path"] == "suite"

    text = ssw("bench", "summary", "runs/b1", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "ladder vs null (all, 1 tasks)" in text.stdout
    assert "null: built-in, no model" in text.stdout

    again = ssw(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    journal = (tmp_path / "runs" / "b1" / "journal.jsonl").read_text()
    assert journal.count('"event": "started"') == 2  # nothing ran twice


def test_bad_contestants_are_refused_before_anything_runs(tmp_path: Path, monkeypatch):
    write_task(tmp_path, "t1")
    (tmp_path / "ladder.toml").write_text(tomli_w.dumps(DEFAULT_POLICY))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    base = ["run", "--suite", "suite", "--out", "runs/x"]
    cases = {
        ("--contestant", "nope.toml"): "no such policy file",
        ("--contestant", "ladder.toml"): "pass --script ladder=FILE",
        ("--contestant", "null", "--script", "other=s.yaml"): "names no contestant",
        ("--contestant", "null", "--script", "other"): "is not NAME=FILE",
        ("--contestant", "null", "--contestant", "null"): "given twice",
        ("--contestant", "null", "--budget-usd-total", "0"): "positive number of dollars",
    }
    for extra, message in cases.items():
        result = runner.invoke(bench_app, [*base, *extra])
        assert isinstance(result.exception, UsageError), (extra, result.output)
        assert message in str(result.exception), extra
    assert not (tmp_path / "runs").exists()


def test_the_default_folder_is_named_by_the_bench_so_the_same_command_resumes():
    assert default_out(["oracle", "null"], ["general", "science"], 1) == Path(
        "bench/runs/oracle-vs-null.general+science.k1"
    )
