"""Fallbacks (issue 26, ADR 0038): a worker whose provider fails (429 or 5xx past the retries,
no answer within its timeout, an endpoint that refuses connections) hands the step to its
fallback, within the budget, said on the step's line, in its record and in the ledger; a
refused key or a model's bad output is never a reason; no worker left is an `error` naming each.

The workers are on the scripted provider, each at its own loopback server: the failing one
injects the fault, the fallback's answers SCRIPTED replies (nothing here is a model)."""

from __future__ import annotations

import json
import re
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stepswitch.agent.events import Notice
from stepswitch.agent.providers import HttpProviders
from stepswitch.agent.run import RunExtras
from stepswitch.cli.render import format_step
from stepswitch.errors import ConfigError
from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.fakes.scripted import Script, ScriptedResponder
from stepswitch.ledger import Budget
from stepswitch.policy.check import check_policy, render_policy_check
from stepswitch.policy.model import validate_policy
from stepswitch.records.folder import load_run
from stepswitch.records.steps import ModelStep
from stepswitch.registry.presets import load_registry
from tests.harness.task import (
    run_with_passing_gates,
    whole_fix,
    worker,
)

QUICK_RETRY = {"retry-after": "0"}
BLOCK = re.compile(
    r'<script type="application/json" id="([^"]+)">(.*?)</script>', re.S
)  # the client's retries, without their waits


class Said:
    """What the run says as it goes: its notices, and each step's line as the CLI prints it."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def on_event(self, event: object) -> None:
        if isinstance(event, Notice):
            self.lines.append(event.text)
        elif isinstance(event, ModelStep):
            self.lines.append(format_step(event))


def policy_with(main: str, backup: str, *, third: str | None = None, **main_extra: Any) -> dict:
    fallback = ["backup"]
    workers = {
        "main": worker("scripted-mid", base_url=main, fallback=fallback, **main_extra),
        "backup": worker("scripted-large", base_url=backup),
    }
    if third is not None:
        workers["backup"]["fallback"] = ["third"]
        workers["third"] = worker("scripted-small", base_url=third)
    return {
        "workers": workers,
        "rules": [{"worker": "main"}],
        "escalation": {"ladder": ["main"]},
        "limits": {"max_steps": 30, "steps_per_rung": 30, "wall_time_s": 120},
        "review": {"reviewer": "main"},
    }


@dataclass
class Ran:
    outcome: str
    reason: str | None
    steps: list[ModelStep]
    lines: list[str]
    rows: list[Any]


def run_policy(tmp_path: Path, repo: Path, raw: dict, budget_usd: float | None = 1.0) -> Ran:
    """One run of `raw` (a policy table) on `repo`, as ssw run does it, and what it left."""
    policy = validate_policy(raw, "p.toml")
    lines: list[str] = []
    providers = HttpProviders(load_registry())
    budgets = (Budget("task", "t1", budget_usd),) if budget_usd is not None else ()
    try:
        extras = RunExtras(sinks=[Said(lines)])
        record, rows = run_with_passing_gates(tmp_path, repo, policy, providers, budgets, extras)
    finally:
        providers.close()
    steps = load_run(tmp_path / "records").model_steps
    return Ran(record.outcome, record.reason, steps, lines, rows)


def scripted_fix() -> LoopbackServer:
    replies = whole_fix()
    return LoopbackServer(ScriptedResponder(Script.model_validate({"replies": replies})))


def run_with(tmp_path: Path, repo: Path, failing: Reply | None, **extra: Any) -> Ran:
    """A run whose `main` worker is answered by `failing` (None: a port nothing listens on)
    and whose `backup` gets the scripted fix."""
    main = LoopbackServer(lambda request: failing or Reply())
    with scripted_fix() as backup, main:
        main_url = main.base_url if failing is not None else closed_port_url()
        return run_policy(tmp_path, repo, policy_with(main_url, backup.base_url, **extra))


def closed_port_url() -> str:
    with socket.socket() as sock:  # bound, never listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1/"


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (Reply(status=503, headers=QUICK_RETRY), "gave up after 4 attempts"),
        (Reply(status=429, headers=QUICK_RETRY), "HTTP 429"),
        (Reply(status=501), "HTTP 501"),
        (None, "connection error"),
    ],
    ids=["503-storm", "429-storm", "501", "refused"],
)
def test_a_failing_provider_moves_the_step_to_the_fallback_and_says_so_everywhere(
    tmp_path: Path, bug_repo: Path, fault: Reply | None, said: str
) -> None:
    ran = run_with(tmp_path, bug_repo, fault)
    assert ran.outcome == "done", ran.reason
    failed, moved, *rest = ran.steps
    assert failed.worker == "main" and failed.error and said in failed.error
    assert (moved.worker, moved.fallback_from) == ("backup", "main")
    assert moved.fallback_reason is not None and said in moved.fallback_reason
    # main is not asked again in this run: every later step goes straight to backup
    assert all((s.worker, s.fallback_from) == ("backup", "main") for s in rest)
    why = failed.error.removeprefix("worker 'main' (scripted scripted-mid): ")
    assert moved.fallback_reason == f"main: {why}"
    assert f"step 1: main failed ({why}); backup takes it" in ran.lines
    [line] = [line for line in ran.lines if line.startswith("  2 ")]
    assert " backup " in line and line.endswith(f"[fallback: main: {why}]")
    backup_rows = [r for r in ran.rows if r.worker == "backup"]
    assert backup_rows and all(r.tags.get("fallback_from") == "main" for r in backup_rows)
    assert all("fallback_from" not in r.tags for r in ran.rows if r.worker == "main")


def test_a_provider_that_stops_answering_is_left_at_the_workers_timeout(
    tmp_path: Path, bug_repo: Path
) -> None:
    slow = Reply(delay_s=30.0)  # the server holds the call; the worker gives up at 1 s
    ran = run_with(tmp_path, bug_repo, slow, timeout=1)
    assert ran.outcome == "done", ran.reason
    assert ran.steps[1].fallback_reason == "main: no answer within its timeout"


def test_a_provider_that_recovers_within_the_retries_keeps_the_step(
    tmp_path: Path, bug_repo: Path
) -> None:
    replies = whole_fix()
    scripted = ScriptedResponder(Script.model_validate({"replies": replies}))
    calls = iter(range(1000))

    def flaky(request: RecordedRequest) -> Reply:
        return Reply(status=503, headers=QUICK_RETRY) if next(calls) == 0 else scripted(request)

    with LoopbackServer(flaky) as main:
        ran = run_policy(tmp_path, bug_repo, policy_with(main.base_url, closed_port_url()))
    assert ran.outcome == "done"
    assert {s.worker for s in ran.steps} == {"main"} and ran.steps[0].attempts == 2
    assert not any(s.fallback_from for s in ran.steps)


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (Reply(status=401), "refused the key"),
        (Reply(status=400, body={"error": "bad request"}), "HTTP 400"),
        (Reply(body={"not": "a completion"}), "worker 'main'"),
    ],
    ids=["auth", "bad-request", "unreadable"],
)
def test_a_refused_key_a_rejected_request_or_an_unreadable_answer_is_no_reason_to_fall_back(
    tmp_path: Path, bug_repo: Path, fault: Reply, said: str
) -> None:
    ran = run_with(tmp_path, bug_repo, fault)
    assert ran.outcome == "error" and ran.reason is not None and said in ran.reason
    assert [s.worker for s in ran.steps] == ["main"]
    assert not any(r.worker == "backup" for r in ran.rows)


def test_no_worker_left_ends_the_run_in_error_naming_each_attempt(
    tmp_path: Path, bug_repo: Path
) -> None:
    down = LoopbackServer(lambda request: Reply(status=503, headers=QUICK_RETRY))
    with down:  # main and backup both answer 503; backup's own fallback refuses connections
        raw = policy_with(down.base_url, down.base_url, third=closed_port_url())
        ran = run_policy(tmp_path, bug_repo, raw, budget_usd=None)
    assert ran.outcome == "error"
    reason = ran.reason or ""
    assert reason.startswith("no worker left for the plan step: main: gave up after 4 attempts")
    assert "; backup: gave up after 4 attempts" in reason
    assert "; third: gave up after 4 attempts" in reason and "Connection refused" in reason
    assert [(s.worker, s.fallback_from, bool(s.error)) for s in ran.steps] == [
        ("main", None, True),
        ("backup", "main", True),
        ("third", "main", True),
    ]


def test_the_fallback_is_admitted_by_the_budget_before_it_is_sent(
    tmp_path: Path, bug_repo: Path, extra_models: Path
) -> None:
    # backup costs $10 a million tokens: a 1,024-token cap alone needs more than $0.0001
    main = LoopbackServer(lambda request: Reply(status=503, headers=QUICK_RETRY))
    with scripted_fix() as backup, main:
        raw = policy_with(main.base_url, backup.base_url)
        raw["workers"]["backup"]["model"] = "scripted-priced"
        ran = run_policy(tmp_path, bug_repo, raw, budget_usd=0.0001)
        sent_to_backup = len(backup.requests)
    assert ran.outcome == "limit" and "budget" in (ran.reason or "")
    assert sent_to_backup == 0  # refused before it left the machine
    assert all(r.worker == "main" for r in ran.rows if r.status != "refused")


def test_a_policy_names_its_fallbacks_and_ssw_policy_check_shows_the_chains() -> None:
    raw = policy_with("http://127.0.0.1:1/v1/", "http://127.0.0.1:2/v1/", third="http://x.test/")
    check = render_policy_check(check_policy(validate_policy(raw, "p.toml"), load_registry()))
    assert "fallbacks, when a worker's provider fails:\n  main -> backup -> third" in check
    assert "  backup -> third" in check
    assert (
        "workers.main.fallback[0]: 'backup' is on the same provider (scripted); an outage of "
        "scripted takes both"
    ) in check
    assert "never used" not in check  # a fallback is a use


@pytest.mark.parametrize(
    ("fallback", "problem"),
    [
        (["nobody"], "workers.main.fallback[0]: names worker 'nobody', which is not configured"),
        (["main"], "workers.main.fallback[0]: names itself"),
        (["backup", "backup"], "workers.main.fallback[1]: names 'backup' twice"),
    ],
)
def test_a_fallback_that_names_no_worker_itself_or_one_twice_is_refused(
    fallback: list[str], problem: str
) -> None:
    raw = policy_with("http://127.0.0.1:1/v1/", "http://127.0.0.1:2/v1/")
    raw["workers"]["main"]["fallback"] = fallback
    with pytest.raises(ConfigError) as refused:
        validate_policy(raw, "p.toml")
    assert problem in str(refused.value)


def test_the_page_shows_the_fallback_on_its_step(tmp_path: Path, bug_repo: Path) -> None:
    from stepswitch.site.build import build_site

    run_with(tmp_path, bug_repo, Reply(status=503, headers=QUICK_RETRY))
    html = build_site([tmp_path / "records"], tmp_path / "site").page.read_text("utf-8")
    data = next(
        json.loads(m.group(2)) for m in BLOCK.finditer(html) if m.group(1).startswith("d-b")
    )
    [run] = next(iter(data["runs"].values()))
    steps = [e for e in run["events"] if e["kind"] == "model_step"]
    assert [s["fallback_from"] for s in steps[:2]] == [None, "main"]
    assert steps[1]["fallback_reason"].startswith("main: gave up after 4 attempts")
    # tests/site/test_browser.py reads the badge and the reason as the page shows them
