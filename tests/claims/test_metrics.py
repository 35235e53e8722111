"""The metrics recompute their figures from the raw evidence and refuse evidence that disagrees
with itself or leaves a figure unknown."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import yaml

from stepswitch.claims.inputs import EvidenceError, Inputs, Unprovable
from stepswitch.claims.metrics import all_metrics
from tests.claims.conftest import REPO

TABLE = "claims/pricing_hand_computed.yaml"


def compute(root: Path, metric: str, params: dict | None = None, **evidence: str | list[str]):
    paths = {role: [p] if isinstance(p, str) else p for role, p in evidence.items()}
    inputs = Inputs(root, paths, params or {})
    return all_metrics()[metric].compute(inputs), inputs


def test_the_ledger_bills_every_recorded_payload_as_worked_out_by_hand():
    computed, inputs = compute(REPO, "pricing.fixtures", table=TABLE)
    assert computed.values["mismatches"] == 0, [r for r in computed.details if r["problems"]]
    assert (computed.values["rows"], computed.values["formats"]) == (11, 4)
    assert computed.values["providers"] == "anthropic, gemini, openai"
    assert "registry/providers/anthropic.toml" in inputs.hashes
    assert "tests/fixtures/messages/stream_thinking_and_text.sse" in inputs.hashes


@pytest.fixture
def pricing_root(tmp_path: Path) -> Path:
    for rel in ("registry/providers", "tests/fixtures"):
        shutil.copytree(REPO / rel, tmp_path / rel)
    (tmp_path / "claims").mkdir()
    shutil.copy(REPO / TABLE, tmp_path / TABLE)
    return tmp_path


def _edit_row(root: Path, index: int, **changes) -> None:
    data = yaml.safe_load((root / TABLE).read_text())
    for key, value in changes.items():
        if isinstance(value, dict):
            data["rows"][index][key].update(value)
        else:
            data["rows"][index][key] = value
    (root / TABLE).write_text(yaml.safe_dump(data))


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"usd": "0.0065616"}, "the row's tokens at its rates give $0.0065615, not $0.0065616"),
        ({"tokens": {"cache_write": 5000, "uncached": 244}}, "tokens.uncached is 244 by hand"),
        ({"rates": {"cache_write": "1.0"}}, "rates.cache_write 1.0 is not the list 1.25"),
    ],
)
def test_a_hand_row_that_disagrees_is_a_mismatch_naming_why(pricing_root, changes, problem):
    _edit_row(pricing_root, 4, **changes)  # prompt_cache_write.json at claude-haiku-4-5
    computed, _ = compute(pricing_root, "pricing.fixtures", table=TABLE)
    assert computed.values["mismatches"] == 1
    problems = computed.details[4]["problems"]
    assert any(p.startswith(problem) for p in problems), problems


def test_a_registry_price_change_shows_in_the_pricing_claim(pricing_root):
    path = pricing_root / "registry/providers/anthropic.toml"
    path.write_text(path.read_text().replace("cache_write = 1.25", "cache_write = 1.0"))
    computed, _ = compute(pricing_root, "pricing.fixtures", table=TABLE)
    assert computed.values["mismatches"] == 2  # both claude-haiku-4-5 rows keep the old rate


def _fixed_perf(root: Path) -> Path:
    """The 2026-11-29 bench/perf results, pinned: a re-measurement must not change the tests."""
    path = root / "bench/perf/results.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tests/fixtures/claims/perf-results.json", path)
    return path


def test_a_perf_summary_that_is_not_its_repetitions_median_cannot_prove(tmp_path):
    path = _fixed_perf(tmp_path)
    data = json.loads(path.read_text())
    data["overhead"]["ssw_runs"][0]["overhead_per_step_ms"] = 1.0
    path.write_text(json.dumps(data))
    with pytest.raises(Unprovable, match=r"overhead\.ssw_overhead_per_step_ms\.median is 4\.78425"):
        compute(tmp_path, "perf.overhead", results="bench/perf/results.json")


def test_perf_figures_are_read_from_the_repetitions(tmp_path):
    _fixed_perf(tmp_path)
    computed, inputs = compute(tmp_path, "perf.overhead", results="bench/perf/results.json")
    v = computed.values
    assert (v["steps"], v["reps"], v["mini_version"]) == (40, 5, "2.4.6")
    assert v["ratio"] == pytest.approx(v["ssw_ms"] / v["mini_ms"])
    assert v["ratio_pair_min"] <= v["ratio"] <= v["ratio_pair_max"]
    assert inputs.measured == {"bench/perf/results.json": "2026-11-29T23:56:17+00:00"}


def test_a_gates_summary_that_disagrees_with_its_rows_cannot_prove(tmp_path):
    (tmp_path / "bench/gates").mkdir(parents=True)
    for rel in ("summary.json", "results.csv"):
        fixture = REPO / "tests/fixtures/claims" / f"gates-{rel}"
        shutil.copy(fixture, tmp_path / "bench/gates" / rel)
    path = tmp_path / "bench/gates/results.csv"
    rows = list(csv.DictReader(path.open()))
    rows[0]["missed_by_impacted"] = "True"
    rows[0]["caught_by_full_stage"] = "True"
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(Unprovable, match="missed_by_impacted_stage is 0, but the raw rows give 1"):
        compute(
            tmp_path,
            "gates.speedup",
            summary="bench/gates/summary.json",
            results="bench/gates/results.csv",
        )


@pytest.fixture
def suite_root(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "bench/suites/science", tmp_path / "bench/suites/science")
    return tmp_path


def _science_tasks() -> list[str]:
    return sorted(
        f"science/{p.name}" for p in (REPO / "bench/suites/science").iterdir() if p.is_dir()
    )


def test_printed_validate_lines_are_not_the_record_and_prove_nothing(suite_root):
    """The lines `ssw bench validate` prints say neither when nor on which commit they ran: they
    are refused as undated, and never parsed (bench/files/: the record is the only input)."""
    tasks = _science_tasks()
    lines = [f"valid    {t}  (start: 1 failed; reference: 3 passed x2)" for t in tasks]
    transcript = suite_root / "validate.txt"
    total = f"{len(lines)} tasks: {len(lines)} valid, 0 invalid (9.1 s)"
    transcript.write_text("\n".join([*lines, total]) + "\n")
    inputs = Inputs(
        suite_root, {"transcript": ["validate.txt"], "suites": ["bench/suites/science"]}
    )
    with pytest.raises(Unprovable, match=r"validate\.txt is not the record of ssw bench validate"):
        all_metrics()["bench.validation"].compute(inputs)
    assert "neither when nor on which commit" in inputs.undated["validate.txt"]


def _bench_run(root: Path, rows: list[dict], **run) -> str:
    """A bench folder as `ssw bench run` writes it: run.json, results.csv (bench/results.py)."""
    from stepswitch.bench.results import CSV_COLUMNS

    folder = root / "bench/runs/b1"
    folder.mkdir(parents=True)
    record = {"started_at": "2026-12-02T10:00:00+00:00", "commit": None, "dirty": False, **run}
    (folder / "run.json").write_text(json.dumps(record))
    with (folder / "results.csv").open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, restval="0", lineterminator="\n")
        writer.writeheader()
        writer.writerows({"served_other_model": "false", **row} for row in rows)
    return "bench/runs/b1"


def _row(task: str, contestant: str, passed: bool, cost: float = 0.0, **more):
    kind = contestant if contestant in ("oracle", "null") else "policy"
    return {
        "task": task,
        "suite": task.split("/")[0],
        "contestant": contestant,
        "contestant_kind": kind,
        "attempt": "0",
        "passed": "true" if passed else "false",
        "outcome": "done",
        "dollars_low": str(cost),
        "dollars_high": str(cost),
        **more,
    }


def test_oracle_and_null_are_counted_over_every_task_of_the_suites(suite_root):
    tasks = _science_tasks()
    rows = [_row(t, "oracle", True) for t in tasks] + [_row(t, "null", False) for t in tasks]
    rows[0] = _row(tasks[0], "oracle", False, outcome="harness_error")
    # The hidden tests pass, but the oracle's change failed its own gates: the harness failed.
    rows[1] = _row(tasks[1], "oracle", True, outcome="gates_failed")
    run = _bench_run(suite_root, rows[:-1], claims=["C-002"])  # null skipped one task
    computed, inputs = compute(
        suite_root, "bench.oracle_null", run=run, suites="bench/suites/science"
    )
    assert computed.values == {
        "suites": 1,
        "tasks": len(tasks),
        "oracle_failed": 2,
        "oracle_not_done": 2,
        "null_passed": 1,  # a task null never ran counts against the claim, never for it
        "harness_errors": 1,
    }
    assert inputs.runs[0].claims == ("C-002",)
    assert inputs.runs[0].started_at == "2026-12-02T10:00:00+00:00"
    assert inputs.contestants == {"contestant null": "null", "contestant oracle": "oracle"}


POLICIES = [
    {
        "name": name,
        "kind": "policy",
        "label": "a routing policy",
        "policy_path": f"policies/{name}.toml",
        "policy_sha256": "0" * 64,
        "policy": {"workers": {"mid": {"provider": "tokenfactory", "model": "m"}}},
    }
    for name in ("ladder", "ultra")
]


def test_paired_dollars_are_the_bench_summarys_ratio_and_interval(tmp_path):
    from stepswitch.bench.summary import compare

    rows = []
    for i in range(30):
        rows.append(_row(f"s/t{i:02d}", "ladder", i % 3 != 0, 0.01 + (i % 10) * 0.001))
        rows.append(_row(f"s/t{i:02d}", "ultra", True, 0.05 + (i % 10) * 0.002))
    run = _bench_run(tmp_path, rows, contestants=POLICIES)
    params = {"treatment": "ladder", "control": "ultra"}
    computed, inputs = compute(tmp_path, "bench.paired_dollars", params, run=run)
    v = computed.values
    assert v["dollars_ratio"] == pytest.approx(0.145 / 0.59)
    assert v["ratio_ci_low"] < v["dollars_ratio"] < v["ratio_ci_high"]
    assert v["ratio_ci_width"] == pytest.approx(v["ratio_ci_high"] - v["ratio_ci_low"])
    assert (v["tasks"], v["control_pass_rate"]) == (30, 1.0)
    assert v["treatment_pass_rate"] == pytest.approx(2 / 3)
    from stepswitch.bench.results import ResultRow

    summary = compare("ladder", "ultra", [ResultRow.model_validate(r) for r in rows])
    assert v["ratio_ci_high"] == summary["dollars_ratio"]["high"]
    # The pass rates' difference in points (ladder fails every third task), with its interval.
    assert v["pass_difference_points"] == pytest.approx(-100 / 3)
    assert v["pass_difference_ci_low"] < v["pass_difference_points"] < v["pass_difference_ci_high"]
    assert v["pass_difference_ci_high"] == pytest.approx(
        100 * summary["pass_rate_difference"]["high"]
    )
    # The bench is noted once, and whose runs it holds with it.
    assert [r.folder for r in inputs.runs] == ["bench/runs/b1"]
    assert inputs.contestants == {"contestant ladder": "model", "contestant ultra": "model"}


def test_a_task_run_with_unpriced_steps_makes_the_dollars_ratio_unprovable(tmp_path):
    rows = [_row("s/a", "ladder", True, 0.01), _row("s/a", "ultra", True, 0.05)]
    rows += [_row("s/b", "ladder", True, 0.0, unpriced_steps="3"), _row("s/b", "ultra", True, 0.05)]
    run = _bench_run(tmp_path, rows, contestants=POLICIES)
    with pytest.raises(Unprovable, match="1 task runs have unpriced steps"):
        compute(
            tmp_path, "bench.paired_dollars", {"treatment": "ladder", "control": "ultra"}, run=run
        )


def _paired_dollars_of_one_row(root: Path, dirty: bool) -> None:
    """bench.paired_dollars of a bench run (run.json saying whether its tree was `dirty`) whose
    results.csv is one row without a suite column."""
    folder = root / "bench/runs/b1"
    folder.mkdir(parents=True)
    record = {"started_at": "2026-12-02T10:00:00+00:00", "dirty": dirty}
    (folder / "run.json").write_text(json.dumps(record))
    (folder / "results.csv").write_text("task,contestant,passed\ns/a,oracle,true\n")
    compute(root, "bench.paired_dollars", {"treatment": "a", "control": "b"}, run="bench/runs/b1")


def test_a_results_file_without_a_column_names_it(tmp_path):
    with pytest.raises(EvidenceError, match=r"bench/runs/b1/results\.csv has no column suite"):
        _paired_dollars_of_one_row(tmp_path, dirty=False)


def test_a_bench_run_from_a_tree_with_uncommitted_changes_proves_nothing(tmp_path):
    """ADR 0028: the bench's run.json says whether its tree had changes; if it had, no claim."""
    with pytest.raises(Unprovable, match=r"run\.json: the tree it was made from had uncommitted"):
        _paired_dollars_of_one_row(tmp_path, dirty=True)
