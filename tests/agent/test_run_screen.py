"""What `ssw run` puts on screen at once (issue 43): its header (repo, branch, policy, workers,
budget) before the pre-flight's first gate (whose baseline a first run prints after its plan's
step, ADR 0088), the key checked with one request before anything is
kept (a refused key leaves no branch and no run), and the dollars spent against the budget on
the live line. Real `ssw run` processes against a Token Factory-shaped server on 127.0.0.1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.records.money import format_usd
from stepswitch.util.exit_codes import BAD_INPUT
from tests.harness.cli import run_on_terminal, ssw_env
from tests.harness.repo import git
from tests.harness.task import write_script

from .test_any_model_any_endpoint import KIMI, listing
from .test_run_model_flag import KEY, TokenFactoryOnLoopback, one_model_replies, ssw

TASK = "fix mean"
PRICED = listing("0.0000012", "0.0000034")  # KIMI at $1.20 / $3.40 per million tokens


def _run_args(repo: Path, base_url: str, *more: str) -> list[str | Path]:
    return ["run", repo, "--model", f"tokenfactory:{KIMI}", "--base-url", base_url,
            "--task", TASK, *more]  # fmt: skip


@pytest.mark.slow
def test_the_header_comes_before_the_preflights_first_gate(tmp_path: Path, bug_repo: Path):
    serve = TokenFactoryOnLoopback(write_script(tmp_path, one_model_replies()), PRICED)
    with LoopbackServer(serve) as server:
        args = _run_args(bug_repo, server.base_url, "--budget-usd", "2")
        result = ssw(*args, env_extra={"NEBIUS_API_KEY": KEY})
        asked = list(server.requests)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("ssw run: "))
    first_gate = next(i for i, line in enumerate(lines) if "pre-flight: gates tests" in line)
    verdict = next(i for i, line in enumerate(lines) if "gates: before any edit" in line)
    plan = next(i for i, line in enumerate(lines) if line.startswith("  1 plan "))
    # A first run of the commit: the plan's call went out beside the gates (ADR 0088), whose
    # baseline is printed when their verdict comes; the plan's line once its tools ran, which
    # waited for that verdict.
    assert header < first_gate < verdict < plan
    assert lines[header].startswith(f"ssw run: {bug_repo.resolve()} -> new branch ssw/")
    assert lines[header + 1] == f"  policy: --model tokenfactory:{KIMI}; budget: $2.00"
    assert lines[header + 2] == f"  workers: model tokenfactory:{KIMI}; rungs: model"
    # The key was checked once, on the list of the host the calls go to, with the calls' key.
    checks = [r for r in asked if (r.method, r.path) == ("GET", "/v1/models")]
    assert len(checks) == 1 and checks[0].headers["authorization"] == f"Bearer {KEY}"


def _refuses_everything(request: RecordedRequest) -> Reply:
    return Reply(status=401, body={"error": {"message": "invalid api key"}})


def test_a_refused_key_stops_the_run_in_one_line_with_no_branch_and_no_run(bug_repo: Path):
    with LoopbackServer(_refuses_everything) as server:
        args = _run_args(bug_repo, server.base_url, "--price-usd-per-mtok", "1,2")
        result = ssw(*args, env_extra={"NEBIUS_API_KEY": KEY})
        asked = list(server.requests)

    assert result.returncode == BAD_INPUT == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("ssw: tokenfactory refused the key in NEBIUS_API_KEY (HTTP 401")
    assert KEY not in result.stdout + result.stderr
    assert [(r.method, r.path) for r in asked] == [("GET", "/v1/models")]  # no paid call
    assert "ssw/" not in git(bug_repo, "branch", "--list")
    runs = bug_repo / ".ssw" / "runs"
    assert not runs.exists() or list(runs.iterdir()) == []
    assert not (bug_repo / ".ssw" / "worktrees").exists() or not any(
        (bug_repo / ".ssw" / "worktrees").iterdir()
    )


@pytest.mark.slow
def test_a_key_check_that_gets_no_answer_is_said_and_the_run_goes_on(
    tmp_path: Path, bug_repo: Path
):
    # The list's connection reset (a network error on the key's check); the calls answered.
    serve = TokenFactoryOnLoopback(write_script(tmp_path, one_model_replies()), Reply(reset=True))
    with LoopbackServer(serve) as server:
        args = _run_args(bug_repo, server.base_url, "--price-usd-per-mtok", "1,2")
        result = ssw(*args, env_extra={"NEBIUS_API_KEY": KEY})

    assert result.returncode == 0, result.stderr
    said = [line for line in result.stdout.splitlines() if "not checked" in line]
    assert len(said) == 1 and said[0].startswith("keys: NEBIUS_API_KEY not checked"), result.stdout
    assert "the first call will say" in said[0]


@pytest.mark.slow
def test_the_live_line_carries_the_dollars_spent_against_the_budget(tmp_path: Path, bug_repo: Path):
    env = ssw_env(NEBIUS_API_KEY=KEY, COLUMNS="400")
    serve = TokenFactoryOnLoopback(write_script(tmp_path, one_model_replies()), PRICED)
    with LoopbackServer(serve) as server:
        args = [str(a) for a in _run_args(bug_repo, server.base_url, "--budget-usd", "2")]
        code, on_tty = run_on_terminal([sys.executable, "-m", "stepswitch", *args], env)
        assert code == 0, on_tty

    [run] = (bug_repo / ".ssw" / "runs").iterdir()
    steps = [json.loads(line) for line in (run / "steps.jsonl").read_text().splitlines()]
    first = next(s for s in steps if s["kind"] == "model_step")
    spent = format_usd(first["cost"]["low"], first["cost"]["high"])
    assert first["cost"]["low"] > 0  # priced: the line has dollars to show
    assert "\r\x1b[K  … step 1 " in on_tty and " s · $0.0000 of $2.00" in on_tty
    assert f" s · {spent} of $2.00" in on_tty.split("\r\x1b[K  … step 2 ", 1)[1]
