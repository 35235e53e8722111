"""The bench's typed files (bench/files/): every committed bench file loads under its model,
the bench writes through the models, a key or column the bench never writes is refused, and the
bench no longer imports the claims engine (no package imports another that imports it back)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from stepswitch.bench.files import (
    BenchFileError,
    BenchRecord,
    GradeFile,
    ResultRow,
    SummaryFile,
    ValidationRecord,
    parse_json,
    parse_results,
    read_json,
    read_results,
    results_text,
)
from stepswitch.bench.grading_folder import TestVerdict, write_grade
from stepswitch.bench.summary import summarize

REPO = Path(__file__).resolve().parents[2]
RUNS = sorted(p for p in (REPO / "bench/runs").iterdir() if p.is_dir())
VALIDATIONS = sorted((REPO / "bench/validation").glob("*.json"))
PACKAGE = REPO / "src/stepswitch"


@pytest.mark.parametrize("bench", RUNS, ids=lambda p: p.name)
def test_every_committed_bench_folder_loads_under_its_models(bench: Path) -> None:
    rows = read_results(bench / "results.csv")
    summary = read_json(SummaryFile, bench / "summary.json")
    record = read_json(BenchRecord, bench / "run.json")
    grades = [read_json(GradeFile, p) for p in sorted(bench.glob("tasks/**/grade.json"))]

    assert summary.task_runs == len(rows) == len(grades)
    assert {c.name for c in record.contestants} == set(summary.contestants)
    assert sum(g.passed for g in grades) == sum(r.passed for r in rows)
    # Written back through the model, results.csv is the committed file byte for byte.
    assert results_text(rows) == (bench / "results.csv").read_text(encoding="utf-8")
    # Figures added since (dollars per passed task, ...) are not in an older file: left unset.
    on_disk = json.loads((bench / "summary.json").read_text())
    assert summary.model_dump(mode="json", exclude_unset=True) == on_disk


@pytest.mark.parametrize("path", VALIDATIONS, ids=lambda p: p.name)
def test_every_committed_validation_record_loads(path: Path) -> None:
    record = read_json(ValidationRecord, path)
    assert record.totals.tasks == len(record.tasks) > 0
    dumped, on_disk = record.model_dump(mode="json"), json.loads(path.read_text())
    if "sandbox" not in on_disk:  # made before `ssw bench validate` recorded its sandbox
        assert dumped.pop("sandbox") is None
    assert dumped == on_disk


def _row(task: str, contestant: str, cost: float, passed: bool) -> ResultRow:
    return ResultRow(
        task=task,
        suite=task.split("/")[0],
        contestant=contestant,
        contestant_kind="policy",
        attempt=0,
        passed=passed,
        outcome="done",
        dollars_low=cost,
        dollars_high=cost,
    )


def test_the_bench_writes_its_summary_and_grades_through_the_models(tmp_path: Path) -> None:
    rows = [_row(f"s/t{i}", c, 0.01 * (i + 1), i % 2 == 0) for i in range(4) for c in "ab"]
    made = summarize(
        rows, bench_id="b", contestants=[("a", "policy"), ("b", "policy")], planned=8, resamples=5
    )
    assert SummaryFile.model_validate(made).comparisons[0].tasks == 4
    verdict = TestVerdict(exit_status=1, report=True, tests=3, failures=1, failing=("t::x",))
    write_grade(tmp_path, verdict)
    grade = read_json(GradeFile, tmp_path / "grade.json")
    assert (grade.passed, grade.failing) == (False, ["t::x"])


def test_a_key_or_a_column_the_bench_never_writes_is_refused(tmp_path: Path) -> None:
    bench = RUNS[0]
    summary = json.loads((bench / "summary.json").read_text())
    summary["contestants"]["oracle"]["all"]["pass_rate_by_hand"] = 1.0
    with pytest.raises(BenchFileError, match=r"contestants\.oracle\.all\.pass_rate_by_hand"):
        parse_json(SummaryFile, json.dumps(summary), "summary.json")
    record = json.loads(VALIDATIONS[0].read_text())
    record["tasks"][0]["valid_by_hand"] = True
    with pytest.raises(BenchFileError, match=r"v\.json: tasks\.0\.valid_by_hand: Extra inputs"):
        parse_json(ValidationRecord, json.dumps(record), "v.json")
    text = (bench / "results.csv").read_text()
    lines = text.splitlines()
    extra = "\n".join([lines[0] + ",note", *(line + ",x" for line in lines[1:])])
    with pytest.raises(BenchFileError, match="'note', which the bench never writes"):
        parse_results(extra, "results.csv")
    with pytest.raises(
        BenchFileError, match=r"r\.csv:2: passed: Value error, is not true or false"
    ):
        parse_results(text.replace(",true,", ",yes,", 1).replace(",false,", ",yes,", 1), "r.csv")
    with pytest.raises(BenchFileError, match="has no column suite"):
        parse_results("task,contestant\ns/a,oracle\n", "results.csv")


def _imports(path: Path) -> set[str]:
    """The stepswitch packages a module imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {n.split(".")[1] for n in names if n.startswith("stepswitch.")}
    return found


def _package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        package = parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")
        graph.setdefault(package, set()).update(_imports(path) - {package})
    return graph


def test_the_bench_does_not_import_the_claims_engine_and_no_package_imports_itself_back() -> None:
    import stepswitch.bench.files
    import stepswitch.claims.metrics.bench  # noqa: F401  (both import: no cycle at import time)

    graph = _package_graph()
    assert "claims" not in graph["bench"]
    assert "bench" in graph["claims"] and "bench" in graph["site"]

    def cycle(start: str, at: str, path: list[str]) -> list[str] | None:
        for nxt in sorted(graph.get(at, ())):
            if nxt == start:
                return [*path, nxt]
            if nxt not in path:
                found = cycle(start, nxt, [*path, nxt])
                if found:
                    return found
        return None

    cycles = [c for p in sorted(graph) if (c := cycle(p, p, [p]))]
    assert cycles == [], " -> ".join(cycles[0])


def test_the_hash_the_bench_records_is_the_one_the_claims_engine_takes() -> None:
    from stepswitch.bench.task import load_suite
    from stepswitch.bench.validate import task_sha256, task_sha256s
    from stepswitch.claims import inputs
    from stepswitch.util import hashing

    # One function, not two that agree today.
    assert (inputs.read_tree, inputs.tree_hash) == (hashing.read_tree, hashing.tree_hash)
    tasks = load_suite(REPO / "bench/suites/science")
    folder = tasks[0].folder
    assert task_sha256(tasks[0]) == hashing.tree_hash(folder, inputs.read_tree(folder))
    assert task_sha256s(tasks) == [task_sha256(task) for task in tasks]
