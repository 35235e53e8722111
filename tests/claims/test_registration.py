"""Pre-registration: a claim is registered (text hash, commit, time) before the runs it depends
on; evidence from earlier runs, from runs for other claims, or under a tampered registration is
refused."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml

from stepswitch.claims.model import load_claims
from stepswitch.ledger.pricing import cost_usd
from stepswitch.records.money import CostRange
from stepswitch.records.run import RunIds, RunRecord, Totals
from stepswitch.records.steps import ModelStep
from stepswitch.registry.presets import Price
from stepswitch.wire.types import Usage
from tests.claims.conftest import CLAIMS, commit_all, git, later, register_all, ssw

RUN_CLAIM = """\
  - id: C-003
    title: Run dollars are tokens times list prices
    statement: "{mismatches} of {checked_steps} checked steps differ."
    metrics: [runs.ledger_dollars]
    bounds: ["mismatches == 0", "checked_steps > 0"]
    bounds_set_by: the issue
    status: registered
"""
PRICE = Price(input=2.0, cached_input=0.2, output=10.0, source="test", as_of="2026-11-29")


def _registrations(repo: Path) -> dict:
    """Each claim's latest entry in the registration log."""
    log = yaml.safe_load((repo / "claims/registrations.yaml").read_text())["log"]
    return {entry["claim"]: entry for entry in log}


def _set_registration(repo: Path, claim: str, **fields: str) -> None:
    """Edit the claim's latest entry in place, as a tamper would."""
    path = repo / "claims/registrations.yaml"
    data = yaml.safe_load(path.read_text())
    [entry for entry in data["log"] if entry["claim"] == claim][-1].update(fields)
    path.write_text(yaml.safe_dump(data))


def test_register_records_the_text_hash_the_commit_and_the_time(make_repo):
    repo = make_repo(prove=False, register=False)
    code, out = ssw(repo, "claims", "register", "C-001")
    assert code == 0, out
    made = _registrations(repo)["C-001"]
    assert made["commit"] == git(repo, "rev-parse", "HEAD")
    assert made["text_sha256"] == load_claims(repo).claims[0].claim.text_sha256()
    assert datetime.fromisoformat(made["date"]).tzinfo is not None
    code, out = ssw(repo, "claims", "register", "C-001")
    assert (code, out.split(" on ")[0]) == (0, "C-001: already registered")
    assert _registrations(repo)["C-001"] == made
    claims = repo / "claims/claims.yaml"
    claims.write_text(claims.read_text().replace("a ratio of", "that is"))
    code, out = ssw(repo, "claims", "register", "C-001")
    assert "its text changed since" in out
    assert _registrations(repo)["C-001"]["text_sha256"] != made["text_sha256"]
    code, out = ssw(repo, "claims", "list")
    assert out.splitlines()[0].startswith("C-001  accepted    registered 20")
    assert "C-002  accepted    not registered" in out


def test_an_unregistered_claim_is_not_proved(make_repo):
    repo = make_repo(prove=False, register=False)
    code, out = ssw(repo, "prove")
    assert code == 1
    assert "problem: C-001: evidence refused: not registered (ssw claims register C-001" in out
    text = (repo / "README.md").read_text()
    # claims.yaml says accepted: the README says so beside the refusal, not "registered"
    shown = "not proved, though claims.yaml says accepted"
    assert f"<!-- claim C-001 ratio -->{shown}<!-- /claim -->" in text


def test_a_registration_dated_before_its_own_commit_is_caught(repo):
    _set_registration(repo, "C-001", date="2000-01-01T00:00:00+00:00")
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert (
        "C-001: evidence refused: its registration is dated 2000-01-01T00:00:00+00:00, before"
        in out
    )
    assert "claims/evidence/C-001.json would change" in out


def test_any_edit_of_a_registration_fails_the_check(repo):
    made = datetime.fromisoformat(_registrations(repo)["C-002"]["date"])
    _set_registration(repo, "C-002", date=(made + timedelta(seconds=1)).isoformat())
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert "problem: claims/evidence/C-002.json would change" in out


def test_a_registration_naming_a_commit_git_does_not_have_is_caught(repo):
    _set_registration(repo, "C-001", commit="0" * 40)
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert "C-001: evidence refused: its registration names commit 000000000000, not in git" in out


def _write_run(repo: Path, started_at: datetime, base_commit: str, tags=None, bill=1.0) -> None:
    folder = repo / "runs/r1"
    folder.mkdir(parents=True, exist_ok=True)
    usage = Usage(prompt_tokens=1200, cached_tokens=1000, completion_tokens=80)
    dollars = cost_usd(PRICE, usage) * bill
    step = ModelStep(
        run_id="r1",
        seq=1,
        step=1,
        step_type="edit",
        worker="mid",
        provider="p",
        model="m",
        prompt_tokens=1200,
        cached_tokens=1000,
        completion_tokens=80,
        cost=CostRange.exact(dollars),
        attempts=1,
    )
    run = RunRecord(
        ids=RunIds(run_id="r1", task_id="t"),
        task="t",
        branch="ssw/r1",
        worktree=".",
        base_commit=base_commit,
        ssw_version="0.1.0",
        policy_path="p.toml",
        policy_sha256="0" * 64,
        policy={},
        prices={"mid": PRICE.model_dump(mode="json")},
        tags=tags or {},
        started_at=started_at.isoformat(timespec="seconds"),
        outcome="done",
        totals=Totals(steps=1, cost=CostRange.exact(dollars)),
    )
    (folder / "run.json").write_text(run.model_dump_json(indent=2))
    (folder / "steps.jsonl").write_text(step.model_dump_json() + "\n")


def _with_run_claim(make_repo, started_offset_min: int, **run) -> tuple[Path, str]:
    """A repository whose claim C-003 was registered, then a run made, then the run named."""
    repo = make_repo(claims=CLAIMS + RUN_CLAIM)
    registered = datetime.fromisoformat(_registrations(repo)["C-003"]["date"])
    base = run.pop("base_commit", git(repo, "rev-parse", "HEAD"))
    _write_run(repo, registered + timedelta(minutes=started_offset_min), base, **run)
    claims = repo / "claims/claims.yaml"
    text = claims.read_text().replace(
        "    status: registered\n", "    evidence: {runs: runs}\n    status: accepted\n"
    )
    claims.write_text(text)
    code, out = ssw(repo, "prove")
    return repo, out if code == 0 else f"exit {code}\n{out}"


def test_a_run_started_after_the_registration_proves_the_claim(make_repo):
    repo, out = _with_run_claim(make_repo, 1)
    assert "C-003  accepted" in out, out
    evidence = json.loads((repo / "claims/evidence/C-003.json").read_text())
    assert evidence["runs"][0]["folder"] == "runs/r1"
    assert evidence["statement"] == "0 of 1 checked steps differ."


def test_a_run_started_before_the_registration_is_refused(make_repo):
    repo, out = _with_run_claim(make_repo, -60)
    assert out.startswith("exit 1")
    assert "problem: C-003: evidence refused: run runs/r1 started at" in out
    assert ", before C-003 was registered" in out
    assert "<!-- claim" not in out
    evidence = json.loads((repo / "claims/evidence/C-003.json").read_text())
    assert (evidence["verdict"], evidence["values"]) == ("not_proved", {})


def test_a_retrospective_claim_still_refuses_an_earlier_run(make_repo):
    repo = make_repo(
        claims=CLAIMS
        + RUN_CLAIM.replace(
            "    status: registered\n", "    retrospective: set long ago\n    status: registered\n"
        )
    )
    registered = datetime.fromisoformat(_registrations(repo)["C-003"]["date"])
    _write_run(repo, registered - timedelta(hours=1), "")
    claims = repo / "claims/claims.yaml"
    claims.write_text(
        claims.read_text().replace(
            "retrospective: set long ago\n    status: registered",
            "retrospective: set long ago\n    evidence: {runs: runs}\n    status: accepted",
        )
    )
    code, out = ssw(repo, "prove")
    assert code == 1
    assert "C-003: evidence refused: run runs/r1 started at" in out


def test_a_run_made_for_another_claim_is_refused(make_repo):
    _, out = _with_run_claim(make_repo, 1, tags={"claim": "C-009"})
    assert "C-003: evidence refused: run runs/r1 was run for C-009, not C-003" in out


def test_a_run_on_a_commit_older_than_the_registration_is_refused(make_repo):
    repo = make_repo(claims=CLAIMS + RUN_CLAIM, prove=False, register=False)
    first = git(repo, "rev-parse", "HEAD")
    commit_all(repo, "later work")
    register_all(repo)
    registered = datetime.fromisoformat(_registrations(repo)["C-003"]["date"])
    _write_run(repo, registered + timedelta(minutes=1), first)
    claims = repo / "claims/claims.yaml"
    claims.write_text(
        claims.read_text().replace(
            "    status: registered\n", "    evidence: {runs: runs}\n    status: accepted\n"
        )
    )
    code, out = ssw(repo, "prove")
    assert code == 1
    assert (
        f"run runs/r1 ran on {first[:12]}, which does not descend from C-003's registration" in out
    )


def test_a_run_file_edited_after_proving_fails_the_check(make_repo):
    repo, out = _with_run_claim(make_repo, 1)
    assert "C-003  accepted" in out, out
    steps = repo / "runs/r1/steps.jsonl"
    step = json.loads(steps.read_text())
    step["cost"] = {"low": 0.001, "high": 0.001}
    steps.write_text(json.dumps(step) + "\n")
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert "problem: C-003: runs/ changed since claims/evidence/C-003.json was written" in out
    assert "C-003  rejected" in out  # the ledger's dollars no longer match the tokens


def test_a_step_billed_off_its_list_price_rejects_the_claim(make_repo):
    _, out = _with_run_claim(make_repo, 1, bill=2.0)
    assert "C-003  rejected" in out
    assert "mismatches 1 (mismatches == 0 FAILS)" in out


def test_registration_times_compare_across_utc_offsets():
    from stepswitch.claims.registration import parse_time

    assert parse_time("2026-12-01T10:00:00+01:00") == parse_time("2026-12-01T09:00:00Z")
    assert parse_time("2026-11-29") == parse_time("2026-11-29T00:00:00+00:00")
    assert parse_time("not a date") is None
    assert later() > parse_time("2026-12-01T09:00:00+00:00")


def test_a_bench_run_can_be_tied_only_to_a_registered_unchanged_claim(make_repo):
    from stepswitch.claims.registration import registered_claim
    from stepswitch.errors import UsageError

    repo = make_repo(prove=False, register=False)
    with pytest.raises(UsageError, match="--claim C-001: not registered; run `ssw claims register"):
        registered_claim(repo, "C-001")
    register_all(repo)
    assert registered_claim(repo, "C-001").commit == git(repo, "rev-parse", "HEAD")
    claims = repo / "claims/claims.yaml"
    claims.write_text(claims.read_text().replace("a ratio of", "that is"))
    with pytest.raises(UsageError, match="its text changed since it was registered"):
        registered_claim(repo, "C-001")
    with pytest.raises(UsageError, match="no such claim"):
        registered_claim(repo, "C-404")


def test_a_claim_registered_naming_its_evidence_to_come_fixes_that_range(make_repo):
    claims = CLAIMS + RUN_CLAIM.replace(
        "    status: registered\n", "    evidence: {runs: runs}\n    status: registered\n"
    )
    repo = make_repo(claims=claims)
    made = _registrations(repo)["C-003"]
    assert made["ranges_sha256"] == load_claims(repo).get("C-003").claim.ranges_sha256()
    code, out = ssw(repo, "prove")
    assert (code, "C-003  registered, not yet proved" in out) == (0, True), out
    # an accepted claim must have its evidence
    path = repo / "claims/claims.yaml"
    path.write_text(path.read_text().replace("status: registered", "status: accepted"))
    code, out = ssw(repo, "prove")
    assert code == 2 and "C-003.evidence.runs: runs does not exist" in out, out
    # the run made after the registration then proves it, over the range registered
    started = datetime.fromisoformat(made["date"]) + timedelta(minutes=1)
    _write_run(repo, started, git(repo, "rev-parse", "HEAD"))
    code, out = ssw(repo, "prove")
    assert "C-003  accepted" in out, out


def test_registering_again_fixes_the_range_an_older_entry_did_not_record(make_repo):
    repo = make_repo(claims=CLAIMS + RUN_CLAIM)
    _set_registration(repo, "C-001", ranges_sha256=None)
    code, out = ssw(repo, "claims", "register", "C-001")
    assert code == 0 and "C-001: its range (its evidence map) changed since" in out, out
    log = yaml.safe_load((repo / "claims/registrations.yaml").read_text())["log"]
    entries = [e for e in log if e["claim"] == "C-001"]
    assert [e.get("ranges_sha256") is not None for e in entries] == [False, True]
