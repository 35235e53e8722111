"""Claims know what their evidence can say (issue 23, route 5; ADR 0027), through the real CLI:
a small repository in a temp folder with real git, a claim registered, then a bench folder for it
(run.json and results.csv as `ssw bench run` writes them), then `python -m stepswitch prove` and
`prove --check`. Each tamper was accepted before the change: a scripted bench speaking of models,
a scripted claim that does not say scripted, a paired claim on one task, a paired claim that
hides its interval's width, a contestant run.json does not record, a column the bench never
writes, a claim on the built-ins speaking of models. The tampered claims are valid claims for
the code before the change (none names {ratio_ci_width}, which it did not know); the two
controls that name it are the rules' own and only load after it."""

from __future__ import annotations

import csv
import json
import os
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import yaml

from stepswitch.bench.results import CSV_COLUMNS
from tests.claims.conftest import CLAIMS_HEAD, REPO, commit_all, git
from tests.harness.cli import run_ssw_cli

README = """\
# Demo

## Benchmarks

<!-- claims-section -->
- <!-- claim C-201 --><!-- /claim -->
<!-- claims-index --><!-- /claims-index -->
<!-- /claims-section -->
"""
PAIRED = """\
  - id: C-201
    title: {title}
    statement: >-
      {statement}
    metrics: [bench.paired_dollars]
    params: {{treatment: ladder, control: big}}
    evidence: {{run: bench/runs/b1}}
    bounds: ["ratio_ci_high < 1", "harness_errors == 0"]
    bounds_set_by: the plan, written before the run
    status: accepted
"""
ORACLE_NULL = """\
  - id: C-201
    title: {title}
    statement: >-
      {statement}
    metrics: [bench.oracle_null]
    evidence: {{run: bench/runs/b1, suites: [bench/suites/science]}}
    bounds: ["oracle_failed == 0", "null_passed == 0"]
    bounds_set_by: the plan, written before the run
    status: accepted
"""
ROUTE5 = "Claude models on the Anthropic ladder fix real bugs correctly, at a fraction of the cost"
SAME_QUALITY = (
    "On {tasks} tasks the ladder passed {treatment_pass_rate} against {control_pass_rate} for "
    "{dollars_ratio} of the dollars ({ratio_ci_low}-{ratio_ci_high})"
)
WITH_WIDTH = SAME_QUALITY + ", an interval {ratio_ci_width} wide"
SCRIPTED_BARE = (
    "On a scripted bench, replayed replies and no model called, the ladder's ledger billed "
    "{dollars_ratio} of the big worker's dollars ({ratio_ci_low}-{ratio_ci_high}) over {tasks} "
    "tasks"
)
SCRIPTED = SCRIPTED_BARE.replace("{ratio_ci_high})", "{ratio_ci_high}, {ratio_ci_width} wide)")
MANY = 30


def _ssw(root: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "NO_COLOR": "1"}
    done = run_ssw_cli([*args, "--root", str(root)], env=env, timeout=300)
    return done.returncode, done.stdout + done.stderr


def _contestant(name: str, provider: str, script: str | None = None) -> dict:
    worker = {"provider": provider, "model": f"{provider}-{name}"}
    return {
        "name": name,
        "kind": "policy",
        "label": "a routing policy",
        "policy_path": f"policies/{name}.toml",
        "policy_sha256": "0" * 64,
        "policy": {"workers": {"mid": worker}},
        "script": script,
    }


def _row(task: str, contestant: str, kind: str, dollars: float, passed: bool) -> dict:
    row = dict.fromkeys(CSV_COLUMNS, "0")
    row.update(
        task=task,
        suite=task.split("/")[0],
        contestant=contestant,
        contestant_kind=kind,
        passed="true" if passed else "false",
        outcome="done",
        reason="",
        verdict="",
        dollars_low=f"{dollars:g}",
        dollars_high=f"{dollars:g}",
        served_other_model="false",
        run_id=f"b1.{task}.{contestant}.0",
        folder=f"tasks/{task}/{contestant}/0",
    )
    return row


def _paired_rows(tasks: int) -> list[dict]:
    rows = []
    for i in range(tasks):
        rows.append(_row(f"s/t{i:02d}", "ladder", "policy", 0.01 + 0.001 * (i % 7), i % 5 != 0))
        rows.append(_row(f"s/t{i:02d}", "big", "policy", 0.05 + 0.002 * (i % 3), True))
    return rows


def _repo(tmp: Path, claim: str, rows: list[dict], contestants: list[dict] | None) -> Path:
    """The claim registered, then the bench made for it, then proved (as its author would)."""
    root = tmp / "repo"
    (root / "claims").mkdir(parents=True)
    (root / "claims/claims.yaml").write_text(CLAIMS_HEAD + claim)
    (root / "README.md").write_text(README)
    if "bench/suites/science" in claim:
        shutil.copytree(REPO / "bench/suites/science", root / "bench/suites/science")
    bench = root / "bench/runs/b1"
    bench.mkdir(parents=True)
    (bench / "run.json").write_text("{}")  # the folder claims.yaml names exists to register
    git(root, "init", "-q")
    commit_all(root, "start")
    code, out = _ssw(root, "claims", "register", "C-201")
    assert code == 0, out
    log = yaml.safe_load((root / "claims/registrations.yaml").read_text())["log"]
    started = datetime.fromisoformat(log[-1]["date"]) + timedelta(minutes=1)
    run: dict = {
        "bench_id": "b1",
        "started_at": started.isoformat(timespec="seconds"),
        "commit": None,
        "dirty": False,
        "claims": ["C-201"],
    }
    if contestants is not None:
        run["contestants"] = contestants
    (bench / "run.json").write_text(json.dumps(run, indent=2))
    with (bench / "results.csv").open("w", newline="") as out_file:
        writer = csv.DictWriter(out_file, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    _ssw(root, "prove")
    commit_all(root, "the bench and its proof")
    return root


def _check(root: Path) -> tuple[int, str]:
    return _ssw(root, "prove", "--check")


def _checked(
    tmp: Path, claim: str, contestants: list[dict] | None, expect: int, tasks: int = MANY
) -> str:
    """`ssw prove --check` of `claim` on a paired bench of `tasks` tasks run by `contestants`,
    once it exited `expect`: its output."""
    root = _repo(tmp, claim, _paired_rows(tasks), contestants)
    code, out = _check(root)
    assert code == expect, out
    return out


MODELS = [_contestant("ladder", "anthropic"), _contestant("big", "anthropic")]
SCRIPTS = [_contestant("ladder", "scripted", "s.yaml"), _contestant("big", "scripted", "s.yaml")]


def _paired(title: str, statement: str) -> str:
    return PAIRED.format(title=title, statement=statement)


def test_a_model_paired_claim_on_enough_tasks_that_shows_its_width_is_accepted(tmp_path):
    """The control: what the rules let through (it names {ratio_ci_width}, new in this change)."""
    out = _checked(tmp_path, _paired("The ladder costs less", WITH_WIDTH), MODELS, 0)
    assert "C-201  accepted" in out


def test_a_scripted_claim_of_the_ledger_that_says_scripted_is_accepted(tmp_path):
    claim = _paired("A scripted ladder bills less", SCRIPTED)
    _checked(tmp_path, claim, SCRIPTS, 0)


def test_route5_a_scripted_bench_cannot_say_models_fix_bugs_correctly(tmp_path):
    out = _checked(tmp_path, _paired(ROUTE5, SAME_QUALITY), SCRIPTS, 1)
    scripted = "but contestant big and contestant ladder are scripted (replayed replies"
    assert f"C-201: its title speaks of models ('Claude'), {scripted}" in out
    assert f"C-201: its title speaks of quality ('fix'), {scripted}" in out
    assert f"C-201: its statement speaks of pass rates ('pass_rate'), {scripted}" in out
    assert "which are scripted, and its statement does not say scripted" in out


def test_a_claim_on_a_scripted_bench_must_say_scripted(tmp_path):
    statement = SCRIPTED_BARE.replace("On a scripted bench, replayed", "With replayed")
    out = _checked(tmp_path, _paired("The ladder bills less", statement), SCRIPTS, 1)
    assert (
        "C-201: it rests on contestant big and contestant ladder, which are scripted, and its "
        "statement does not say scripted: a reader must see that no model was called"
    ) in out


def test_route5_one_task_cannot_prove_a_paired_claim(tmp_path):
    claim = _paired("Same quality for less", SAME_QUALITY)
    out = _checked(tmp_path, claim, MODELS, 1, tasks=1)
    assert "only 1 task(s) were run by both ladder and big: a paired claim needs at least 30" in out


def test_a_paired_claim_must_show_its_intervals_width(tmp_path):
    out = _checked(tmp_path, _paired("The ladder costs less", SAME_QUALITY), MODELS, 1)
    assert "C-201: its statement does not show {ratio_ci_width}, which bench.paired_dollars" in out


def test_a_contestant_run_json_does_not_record_is_not_taken_for_a_model(tmp_path):
    claim = _paired("The ladder costs less", SAME_QUALITY)
    out = _checked(tmp_path, claim, None, 1)
    assert "bench/runs/b1/run.json records no contestant" in out


def test_a_results_column_the_bench_never_writes_is_refused(tmp_path):
    rows = [{**r, "note": "checked by hand"} for r in _paired_rows(MANY)]
    root = _repo(tmp_path, _paired("The ladder costs less", SAME_QUALITY), rows, MODELS)
    code, out = _check(root)
    assert code == 2, out
    assert "bench/runs/b1/results.csv has 'note', which the bench never writes" in out


def _builtin_rows() -> list[dict]:
    tasks = sorted(p.name for p in (REPO / "bench/suites/science").iterdir() if p.is_dir())
    rows = [_row(f"science/{t}", "oracle", "oracle", 0.0, True) for t in tasks]
    return rows + [_row(f"science/{t}", "null", "null", 0.0, False) for t in tasks]


def test_a_claim_on_the_oracle_and_null_cannot_speak_of_models(tmp_path):
    claim = ORACLE_NULL.format(
        title="The models pass every task",
        statement="The oracle fails {oracle_failed} of {tasks} tasks; null passes {null_passed}.",
    )
    root = _repo(tmp_path, claim, _builtin_rows(), None)
    code, out = _check(root)
    assert code == 1, out
    assert "C-201: its title speaks of models ('models'), but contestant null is the built-in" in (
        out
    )
    assert "but contestant oracle is the built-in oracle (the reference change" in out


def test_the_ledger_metric_notes_each_run_and_a_scripted_run_cannot_speak_of_models():
    """runs.ledger_dollars reads run folders, not a bench's rows: each run is noted as what it
    is, so route 5 through the ledger claim is caught too (C-003's committed scripted bench)."""
    from stepswitch.claims.inputs import Inputs
    from stepswitch.claims.metrics import all_metrics
    from stepswitch.claims.scope import word_problems

    rel = "bench/runs/scripted-as-if-ladder.paginate-last-page.k1"
    inputs = Inputs(REPO, {"runs": [rel]})
    all_metrics()["runs.ledger_dollars"].compute(inputs)
    assert list(inputs.contestants.values()) == ["scripted"]
    said = word_problems(ROUTE5, "Claude billed {dollars}", inputs.contestants)
    assert said[0].startswith(f"its title speaks of models ('Claude'), but run {rel}/tasks/")
    assert said[-1].endswith("does not say scripted: a reader must see that no model was called")
    ledger = ("The ledger's dollars", "On a scripted bench, {dollars}")
    assert word_problems(*ledger, inputs.contestants) == []


def test_the_claims_page_says_the_floor_the_code_sets():
    """The Claims page's sentence on paired claims, allowed by readme.allow, states
    MIN_PAIRED_TASKS: the allow entry cannot keep a figure the code has moved away from."""
    import re

    from stepswitch.claims.metrics.bench import MIN_PAIRED_TASKS

    readme = " ".join((REPO / "docs/claims.md").read_text().split())
    assert f"a paired claim needs at least {MIN_PAIRED_TASKS} tasks both contestants ran" in readme
    allow = yaml.safe_load((REPO / "claims/claims.yaml").read_text())["readme"]["allow"]
    patterns = [a["pattern"] for a in allow if "both contestants ran" in a["pattern"]]
    assert len(patterns) == 1 and re.search(patterns[0], readme)
    assert str(MIN_PAIRED_TASKS) in patterns[0]
