"""Which budget stopped a run is a typed fact on its record, never read back out of its reason:
the bench's task run tells its own budget's stop from a task's by it (issue 42)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from stepswitch.agent.prepare import PreparedRun
from stepswitch.agent.providers import HttpProviders
from stepswitch.agent.run import RunExtras, run_task
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.fakes.scripted import Script, start_scripted_server
from stepswitch.ledger import Budget, open_ledger
from stepswitch.ledger.admission import Scope
from stepswitch.policy.model import validate_policy
from stepswitch.records.folder import RunFolder
from stepswitch.records.run import RunIds, RunRecord
from stepswitch.registry.presets import load_registry
from tests.harness.repo import sample_repo
from tests.harness.task import (
    BUG_TASK,
    PassingGates,
    every_worker,
    explore,
    make_policy,
    whole_fix,
)

IDS = RunIds(run_id="r1", task_id="t1", bench_id="b1")
KEYS: dict[Scope, str] = {"task": "t1", "run": "r1", "bench": "b1"}


def run_under(tmp_path: Path, budget: Budget, replies: list[dict]) -> RunRecord:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    raw = make_policy(workers=every_worker("scripted-priced"))
    server, _ = start_scripted_server(Script.model_validate({"replies": replies}))
    providers = HttpProviders(load_registry(), base_urls={"scripted": server.base_url})
    try:
        with open_ledger(tmp_path / "ledger.sqlite") as ledger:
            return run_task(
                PreparedRun(Workspace(repo), PassingGates()),
                task=BUG_TASK,
                policy=validate_policy(raw, "test-policy.toml"),
                ledger=ledger,
                folder=RunFolder(tmp_path / "records"),
                ids=IDS,
                budgets=(budget,),
                providers=providers,
                deadline=time.monotonic() + 120,
                extras=RunExtras(sinks=[]),
            )
    finally:
        providers.close()
        server.stop()


@pytest.mark.parametrize("scope", ["task", "run", "bench"])
def test_a_run_a_budget_refused_says_which_budget_on_its_record(
    tmp_path: Path, extra_models: Path, scope: Scope
):
    # The plan's first call cannot fit $0.045 at $10 a million: refused before it leaves.
    record = run_under(tmp_path, Budget(scope, KEYS[scope], 0.045), explore())

    assert (record.outcome, record.budget_stop) == ("limit", scope)
    written = json.loads((tmp_path / "records" / "run.json").read_text(encoding="utf-8"))
    assert "budget_stop" not in written and written["reason"] == record.reason  # as before


def test_a_run_no_budget_stopped_has_no_budget_stop(tmp_path: Path, extra_models: Path):
    replies = whole_fix()
    record = run_under(tmp_path, Budget("bench", "b1", 100.0), replies)

    assert (record.outcome, record.budget_stop) == ("done", None)
