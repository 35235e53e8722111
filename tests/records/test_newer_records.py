"""A run folder a newer ssw wrote still loads: fields this ssw does not know are ignored, at any
depth, and events of a kind it does not know are skipped and counted. This ssw writes its own
records strictly: a field its models do not declare is an error, never silently dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from stepswitch.errors import UsageError
from stepswitch.records.folder import load_run
from stepswitch.records.run import RunIds, Totals
from stepswitch.records.steps import GateRecord, GateVerdicts
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import sample_repo
from tests.site.conftest import write_run

RUN_ID = "20261201-100000-abc123"
LATER_EVENT = {"kind": "checkpoint", "run_id": RUN_ID, "seq": 4, "escalation": 0, "note": "x"}
# Fields whose keys are data (worker names, tags, a policy as loaded), not a record's fields.
MAPS = {"policy", "policy_flags", "policy_before_flags", "prices", "tags", "by_worker", "timings"}


def with_later_fields(value: Any) -> Any:
    """`value` with a field this ssw does not know in every record, as a newer ssw might add."""
    if isinstance(value, list):
        return [with_later_fields(v) for v in value]
    if not isinstance(value, dict):
        return value
    return {**{k: _with_later_fields(k, v) for k, v in value.items()}, "added_later": [1, 2]}


def _with_later_fields(name: str, value: Any) -> Any:
    if name == "by_worker":  # worker -> dollars: the dollars are records
        return {worker: with_later_fields(cost) for worker, cost in value.items()}
    return value if name in MAPS else with_later_fields(value)


def newer_copy(folder: Path, target: Path) -> Path:
    """The run folder as a newer ssw would have written it: new fields everywhere, and an event
    of a new kind among the others."""
    target.mkdir(parents=True)
    run = json.loads((folder / "run.json").read_text())
    (target / "run.json").write_text(json.dumps(with_later_fields(run), indent=2))
    lines = [with_later_fields(json.loads(ln)) for ln in (folder / "steps.jsonl").open()]
    lines.insert(3, LATER_EVENT)
    (target / "steps.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return target


def test_a_folder_a_newer_ssw_wrote_loads_as_the_same_run(tmp_path: Path) -> None:
    ours = load_run(write_run(tmp_path / "ours", run_id=RUN_ID, fail_once=True, escalate=True))
    newer = load_run(newer_copy(ours.folder, tmp_path / "newer"))

    assert newer.run == ours.run
    assert newer.steps == ours.steps  # the checkpoint skipped, nothing else lost
    assert (ours.unknown_events, newer.unknown_events) == (0, 1)


def test_a_field_this_ssw_knows_that_does_not_load_is_still_an_error(tmp_path: Path) -> None:
    folder = write_run(tmp_path / "run", run_id=RUN_ID)
    lines = (folder / "steps.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    (folder / "steps.jsonl").write_text(json.dumps({**first, "step": "three"}) + "\n")

    with pytest.raises(UsageError, match=r"a record does not load: model_step\.step"):
        load_run(folder)


def test_this_ssw_refuses_a_field_its_records_do_not_declare() -> None:
    with pytest.raises(ValidationError, match="added_later"):
        Totals.model_validate({"steps": 1, "added_later": 2})
    with pytest.raises(ValidationError, match="added_later"):
        RunIds(run_id="r", task_id="t", added_later=1)
    gate = {"name": "tests", "passed": True, "duration_s": 1.0, "added_later": 0}
    with pytest.raises(ValidationError, match="added_later"):
        GateVerdicts(passed=True, gates=[gate])
    assert GateRecord.read(gate) == GateRecord(name="tests", passed=True, duration_s=1.0)


def test_ssw_runs_show_reads_a_newer_run_and_says_what_it_skipped(tmp_path: Path) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    ours = write_run(tmp_path / "ours", run_id=RUN_ID)
    newer_copy(ours, repo / ".ssw" / "runs" / RUN_ID)

    shown = run_ssw_cli(["runs", "show", RUN_ID, "--repo", str(repo)], timeout=60)

    assert shown.returncode == 0, shown.stderr
    assert f"run {RUN_ID}: done (the gates passed)" in shown.stdout
    assert "1 event of a kind this ssw does not know (a newer ssw's) skipped" in shown.stdout
