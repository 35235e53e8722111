"""`ssw bench run` and `ssw bench summary` as a user runs them: a real process, the built-ins and
a policy on the scripted provider (its loopback server per task run), JSON for machines."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import tomli_w
import yaml
from typer.testing import CliRunner

from stepswitch.cli.bench import bench_app, default_out
from stepswitch.errors import UsageError
from tests.harness.cli import run_ssw_cli
from tests.harness.task import DEFAULT_POLICY

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
    return run_ssw_cli(
        [str(a) for a in args],
        cwd=cwd,
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
    assert "ladder vs null (suite, 1 tasks)" in text.stdout  # a single suite, by its name
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


def _claims_repo(tmp_path: Path) -> Path:
    """A repository with claims (C-001 registered, C-002 not) and a task, to run benches in."""
    from tests.claims.conftest import commit_all, git, register_all

    claim = """\
  - id: {id}
    title: Run dollars are tokens times list prices
    statement: "{{mismatches}} of {{checked_steps}} checked steps differ."
    metrics: [runs.ledger_dollars]
    bounds: ["mismatches == 0"]
    bounds_set_by: the issue
    status: registered
"""
    claims = "schema_version: 1\nclaims:\n" + claim.format(id="C-001") + claim.format(id="C-002")
    repo = tmp_path / "repo"
    (repo / "claims").mkdir(parents=True)
    (repo / "claims/claims.yaml").write_text(claims)
    write_task(repo, "t1")
    git(repo, "init", "-q")
    commit_all(repo, "start")
    register_all(repo)
    registrations = repo / "claims/registrations.yaml"
    data = yaml.safe_load(registrations.read_text())
    data["log"] = [entry for entry in data["log"] if entry["claim"] != "C-002"]
    registrations.write_text(yaml.safe_dump(data))
    return repo


def test_bench_run_refuses_an_unknown_or_unregistered_claim_in_one_line_exit_2(
    tmp_path: Path, monkeypatch
):
    repo = _claims_repo(tmp_path)
    monkeypatch.chdir(repo)
    base = ["run", "--suite", "suite", "--contestant", "null", "--out", "runs/x"]
    cases = {
        "C-404": "--claim C-404: no such claim in claims/claims.yaml",
        "C-002": "--claim C-002: not registered; run `ssw claims register C-002` first",
    }
    for claim, message in cases.items():
        result = CliRunner().invoke(bench_app, [*base, "--claim", claim])
        assert isinstance(result.exception, UsageError), result.output
        assert result.exception.exit_code == 2
        assert str(result.exception) == message
        assert "\n" not in str(result.exception)
    monkeypatch.chdir(tmp_path)  # no claims/claims.yaml here or above
    result = CliRunner().invoke(bench_app, [*base, "--claim", "C-001"])
    assert isinstance(result.exception, UsageError)
    assert str(result.exception).startswith("--claim C-001: no claims/claims.yaml in")
    assert not (repo / "runs").exists() and not (tmp_path / "runs").exists()


def test_a_bench_run_for_a_claim_records_it_and_resumes_only_for_the_same_claims(tmp_path):
    from stepswitch.bench.contestants import BuiltinContestant
    from stepswitch.bench.executor import inline_executor
    from stepswitch.bench.runner import BenchSpec, run_bench
    from stepswitch.bench.task import load_suite

    write_task(tmp_path, "t1")

    def bench(claims: list[str]):
        spec = BenchSpec(
            root=tmp_path / "runs/b1",
            tasks=load_suite(tmp_path / "suite"),
            contestants=[BuiltinContestant("null")],
            claims=claims,
        )
        return run_bench(spec, executor=inline_executor, resamples=200)

    assert bench(["C-001"]).status == "complete"
    record = json.loads((tmp_path / "runs/b1/run.json").read_text())
    assert record["claims"] == ["C-001"]
    assert bench(["C-001"]).status == "complete"  # the same bench: resumed
    with pytest.raises(UsageError, match=r"holds another bench \(claims differ\)"):
        bench(["C-002"])
