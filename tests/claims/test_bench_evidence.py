"""Bench evidence and pre-registration: a validation record proves the tasks it validated as
they are now, and only when it started after the claim's registration; a bench run tied to
other claims (`ssw bench run --claim ID`), or started before the registration, is refused for
the claim, also when its task runs are named alone."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from stepswitch.bench.task import load_suite
from stepswitch.bench.validate import CHECKS, Check, TaskValidation, task_entry
from stepswitch.claims.inputs import Inputs, Unprovable
from stepswitch.claims.metrics import all_metrics
from tests.claims.conftest import CLAIMS, REPO, ssw
from tests.claims.test_registration import RUN_CLAIM, _registrations, _write_run

VALIDITY_CLAIM = """\
  - id: C-003
    title: Every task is valid
    statement: "{valid} of {tasks} tasks valid; {invalid} invalid, {not_validated} not validated."
    metrics: [bench.validation]
    bounds: ["invalid == 0", "not_validated == 0"]
    bounds_set_by: the issue
    status: registered
"""
SUITE = "bench/suites/science"


def _record(root: Path, started_at: str, broken: str | None = None) -> str:
    """A validation record of the science suite as `ssw bench validate --out` writes it, every
    check held, except that `broken`'s reference fails."""
    entries = []
    for task in load_suite(root / SUITE):
        checks = tuple(Check(name, True, "ok") for name in CHECKS)
        problem = None
        if task.name == broken:
            checks = (*checks[:3], Check("reference_hidden_1", False, "the reference fails"))
            problem = "the reference fails"
        entries.append(task_entry(task, TaskValidation(task.name, problem, checks=checks)))
    valid = sum(e["valid"] is True for e in entries)
    record = {
        "kind": "ssw bench validate",
        "started_at": started_at,
        "commit": None,
        "dirty": False,
        "totals": {"tasks": len(entries), "valid": valid, "invalid": len(entries) - valid},
        "tasks": entries,
    }
    (root / "bench/validation").mkdir(parents=True, exist_ok=True)
    (root / "bench/validation/v.json").write_text(json.dumps(record, indent=2))
    return "bench/validation/v.json"


def _compute(root: Path, metric: str, **evidence: str):
    inputs = Inputs(root, {role: [path] for role, path in evidence.items()})
    return all_metrics()[metric].compute(inputs), inputs


@pytest.fixture
def suite_root(tmp_path: Path) -> Path:
    shutil.copytree(REPO / SUITE, tmp_path / SUITE)
    return tmp_path


def test_a_validation_record_counts_each_task_of_the_suites_as_it_is_now(suite_root):
    names = sorted(t.name for t in load_suite(suite_root / SUITE))
    rel = _record(suite_root, "2026-12-02T10:00:00+00:00", broken=names[0])
    computed, inputs = _compute(suite_root, "bench.validation", transcript=rel, suites=SUITE)
    assert computed.values["tasks"] == len(names)
    assert (computed.values["valid"], computed.values["invalid"]) == (len(names) - 1, 1)
    assert computed.values["not_validated"] == 0
    assert computed.details["science"]["invalid"] == [names[0]]
    assert [(r.folder, r.started_at) for r in inputs.runs] == [(rel, "2026-12-02T10:00:00+00:00")]
    # A task edited after its validation is not the task that was validated.
    task = suite_root / SUITE / names[1].split("/")[1] / "instruction.md"
    task.write_text(task.read_text() + "\nOne more sentence.\n")
    computed, _ = _compute(suite_root, "bench.validation", transcript=rel, suites=SUITE)
    assert computed.values["not_validated"] == 1
    assert computed.details["science"]["changed"] == [names[1]]


def test_a_record_whose_verdict_is_not_what_its_checks_give_cannot_prove(suite_root):
    rel = _record(suite_root, "2026-12-02T10:00:00+00:00")
    path = suite_root / rel
    record = json.loads(path.read_text())
    record["tasks"][0]["checks"][-1]["ok"] = False  # still marked valid
    path.write_text(json.dumps(record))
    with pytest.raises(Unprovable, match="marked valid=True, but its checks give False"):
        _compute(suite_root, "bench.validation", transcript=rel, suites=SUITE)
    record["tasks"][0]["checks"][-1]["ok"] = True
    record["totals"]["valid"] -= 1
    path.write_text(json.dumps(record))
    with pytest.raises(Unprovable, match="do not count its tasks"):
        _compute(suite_root, "bench.validation", transcript=rel, suites=SUITE)


def _validity_repo(make_repo, offset_min: int | None) -> tuple[Path, int, str]:
    """C-003 registered, then a validation record started `offset_min` after the registration
    (None: printed lines instead of a record) named as its evidence, then proved."""
    repo = make_repo(claims=CLAIMS + VALIDITY_CLAIM)
    shutil.copytree(REPO / SUITE, repo / SUITE)
    registered = datetime.fromisoformat(_registrations(repo)["C-003"]["date"])
    if offset_min is None:
        rel = "bench/validation/v.txt"
        lines = [f"valid    {t.name}  (start: 1 failed)" for t in load_suite(repo / SUITE)]
        (repo / "bench/validation").mkdir(parents=True)
        total = f"{len(lines)} tasks: {len(lines)} valid, 0 invalid (1.0 s)"
        (repo / rel).write_text("\n".join([*lines, total]) + "\n")
    else:
        when = registered + timedelta(minutes=offset_min)
        rel = _record(repo, when.isoformat(timespec="seconds"))
    claims = repo / "claims/claims.yaml"
    evidence = f"    evidence: {{transcript: {rel}, suites: [{SUITE}]}}\n"
    text = claims.read_text().replace(
        "    status: registered\n", evidence + "    status: accepted\n"
    )
    claims.write_text(text)
    code, out = ssw(repo, "prove")
    return repo, code, out


def test_a_validation_started_after_the_registration_proves_the_validity_claim(make_repo):
    repo, code, out = _validity_repo(make_repo, 1)
    assert code == 0, out
    assert "C-003  accepted" in out
    evidence = json.loads((repo / "claims/evidence/C-003.json").read_text())
    assert evidence["runs"][0]["folder"] == "bench/validation/v.json"


def test_a_validation_started_before_the_registration_is_refused(make_repo):
    _, code, out = _validity_repo(make_repo, -60)
    assert code == 1
    assert "C-003: evidence refused: run bench/validation/v.json started at" in out
    assert "before C-003 was registered" in out


def test_printed_validate_lines_cannot_prove_a_claim(make_repo):
    _, code, out = _validity_repo(make_repo, None)
    assert code == 1
    assert "bench/validation/v.txt cannot show it was made after C-003 was registered" in out


def _bench_repo(make_repo, offset_min: int, claims: list[str], name_task_run: bool = False):
    """C-003 (the ledger claim) registered, then a bench folder holding one task run, started
    `offset_min` after the registration and tied to `claims`, named as its evidence."""
    repo = make_repo(claims=CLAIMS + RUN_CLAIM)
    registered = datetime.fromisoformat(_registrations(repo)["C-003"]["date"])
    started = registered + timedelta(minutes=offset_min)
    _write_run(repo, started + timedelta(seconds=5), "")
    bench = repo / "bench/runs/b1"
    task_run = bench / "tasks/suite/t/policy/0"
    task_run.parent.mkdir(parents=True)
    shutil.move(repo / "runs/r1", task_run)
    record = {
        "bench_id": "b1",
        "started_at": started.isoformat(timespec="seconds"),
        "commit": None,
        "dirty": False,
        "claims": claims,
    }
    (bench / "run.json").write_text(json.dumps(record))
    rel = "bench/runs/b1/tasks/suite/t/policy/0" if name_task_run else "bench/runs/b1"
    path = repo / "claims/claims.yaml"
    text = path.read_text().replace(
        "    status: registered\n", f"    evidence: {{runs: {rel}}}\n    status: accepted\n"
    )
    path.write_text(text)
    code, out = ssw(repo, "prove")
    return repo, code, out


def test_a_bench_run_for_the_claim_after_its_registration_proves_it(make_repo):
    repo, code, out = _bench_repo(make_repo, 1, ["C-003"])
    assert code == 0, out
    assert "C-003  accepted" in out
    evidence = json.loads((repo / "claims/evidence/C-003.json").read_text())
    assert [(r["folder"], r["claims"]) for r in evidence["runs"]] == [
        ("bench/runs/b1", ["C-003"]),
        ("bench/runs/b1/tasks/suite/t/policy/0", []),
    ]


def test_a_bench_run_for_another_claim_is_refused_for_the_ledger_claim(make_repo):
    _, code, out = _bench_repo(make_repo, 1, ["C-009"])
    assert code == 1
    assert "C-003: evidence refused: run bench/runs/b1 was run for C-009, not C-003" in out


def test_a_task_run_named_alone_is_still_tied_to_its_bench(make_repo):
    _, code, out = _bench_repo(make_repo, 1, ["C-009"], name_task_run=True)
    assert code == 1
    assert "run bench/runs/b1 was run for C-009, not C-003" in out


def test_a_bench_run_started_before_the_registration_is_refused_for_the_ledger_claim(make_repo):
    _, code, out = _bench_repo(make_repo, -60, ["C-003"])
    assert code == 1
    assert "C-003: evidence refused: run bench/runs/b1 started at" in out
    assert "before C-003 was registered" in out


@pytest.mark.parametrize("dirty", [True, None], ids=["uncommitted", "not-said"])
def test_a_validation_made_from_a_tree_with_uncommitted_changes_proves_nothing(
    suite_root: Path, dirty: bool | None
) -> None:
    """ADR 0028: evidence comes from a committed tree; a record that cannot say is refused too."""
    rel = _record(suite_root, "2026-12-02T10:00:00+00:00")
    record = json.loads((suite_root / rel).read_text())
    (suite_root / rel).write_text(json.dumps({**record, "dirty": dirty}))
    with pytest.raises(Unprovable, match=r"bench/validation/v\.json: the tree it was made from"):
        _compute(suite_root, "bench.validation", transcript=rel, suites=SUITE)
