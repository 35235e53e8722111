"""bench/gates' Node measurement (node_mutate.py, node_bench.py) on a tiny committed package
(tests/fixtures/repos/node-bench): its seeded mutations land where the suite runs and come
undone, and its summary is what claim C-015's metric `gates.speedup` recomputes from its rows.
Nothing is downloaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.claims.inputs import Inputs
from stepswitch.claims.metrics import all_metrics
from tests.harness.repo import git, sample_repo

BENCH = Path(__file__).resolve().parents[2] / "bench" / "gates"
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


@pytest.fixture
def scripts(monkeypatch: pytest.MonkeyPatch):
    """The bench scripts, imported as they import one another (their folder first on sys.path)."""
    monkeypatch.syspath_prepend(str(BENCH))
    for name in ("bench", "common", "node_project", "node_mutate", "node_bench"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import node_bench
    import node_mutate
    import node_project

    return node_project, node_mutate, node_bench


def _target(node_project, root: Path):
    return node_project.NodeTarget(
        name="node-bench",
        version="1.0.0",
        integrity="sha512-unused",
        tests="node --test lib/*.test.js test/*.test.js",
        runner="node-test",
        sources=("lib",),
        excluded=(),
        root=root,
    )


def test_a_line_is_mutated_in_its_code_not_in_its_strings_comments_or_a_chain(scripts):
    _, mutate, _ = scripts
    line = "  if (a === 'x' && b) { // a < b"
    found = {(c.kind, c.after) for c in mutate.line_candidates("m.js", 3, line)}
    assert found == {
        ("compare", "  if (a !== 'x' && b) { // a < b"),
        ("and_or", "  if (a === 'x' || b) { // a < b"),
        ("negate", "  if (!(a === 'x' && b)) { // a < b"),
    }
    chained = mutate.line_candidates("m.js", 4, "    .keys(levels)", "  Object")
    assert [c.kind for c in chained] == []
    whole = mutate.line_candidates("m.js", 5, "  result += eol", "  let result = ''", "  return")
    assert [(c.kind, c.after) for c in whole] == [("drop", "  void 0")]


@needs_node
def test_seeded_mutations_sit_on_lines_the_suite_runs_and_are_undone(scripts, tmp_path):
    node_project, mutate, _ = scripts
    root = sample_repo(tmp_path / "pkg", "node-bench")
    target = _target(node_project, root)
    found = mutate.candidates(target)
    # Inside a function, on lines that ran: not the module's top level (`const LIMIT = 100`).
    assert {(c.module, c.line) for c in found} == {
        ("lib/add.js", 6),
        ("lib/add.js", 7),
        ("lib/add.js", 9),
        ("lib/label.js", 4),
    }
    ordered = mutate.ordered(found, seed=7)
    assert {c.module for c in ordered[:2]} == {"lib/add.js", "lib/label.js"}  # one each first
    candidate = next(c for c in found if (c.line, c.kind) == (9, "arith"))
    verdict = mutate.verify(target, candidate, node_project.gate_env())
    assert verdict["kept"] is True and verdict["suite_rc"] == 1
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""
    text = (root / "lib/add.js").read_text()
    original = __import__("common").apply_mutation(candidate.mutation("m01"), root)
    assert (root / "lib/add.js").read_text() == text.replace("return a + b", "return a - b")
    __import__("common").revert(candidate.mutation("m01"), original, root)
    assert (root / "lib/add.js").read_text() == text
    done = subprocess.run(["node", "--check", "lib/add.js"], cwd=root, capture_output=True)
    assert done.returncode == 0


def _row(ident: str, impacted_s: float, full_s: float, **extra: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": ident,
        "module": "lib/add.js",
        "line": 9,
        "kind": "arith",
        "before": "return a + b",
        "after": "return a - b",
        "order": "ab",
        "selected_files": 1,
        "total_test_files": 2,
        "impacted_why": "1 test file of 2 import a changed file",
        "failing_stage": "tests:impacted",
        "impacted_first_failure": "lib/add.test.js::adds",
        "missed_by_impacted": False,
        "caught_by_full_stage": "",
        "impacted_first_verdict_s": impacted_s,
        "impacted_wall_s": impacted_s + 0.01,
        "full_first_verdict_s": full_s,
        "full_wall_s": full_s + 0.01,
        "full_failed": True,
        "full_first_failure": "lib/add.test.js::adds",
        "ratio": full_s / impacted_s,
        "load_1m": 1.0,
    }
    return row | extra


def test_the_summary_is_what_gates_speedup_recomputes_from_the_rows(scripts, tmp_path):
    node_project, _, bench = scripts
    rows = [
        _row("m01", 0.4, 2.0),
        _row("m02", 0.5, 2.5),
        _row(
            "m03",
            2.6,
            2.1,
            missed_by_impacted=True,
            caught_by_full_stage=True,
            failing_stage="tests:full",
        ),
        _row("m04", 2.2, 2.2, selected_files=2),
    ]
    target = _target(node_project, tmp_path / "pkg")
    summary = {"stepswitch_commit": "0123456789ab" * 3, "stepswitch_dirty": False}
    summary |= bench.summarise(rows, target, tests=3, files=2, reference_s=2.3)
    summary |= {"date": "2026-12-07"}
    folder = tmp_path / "bench/gates/node"
    folder.mkdir(parents=True)
    bench.write_results(rows, summary, folder / "results.csv", folder / "summary.json")
    paths = {
        "summary": ["bench/gates/node/summary.json"],
        "results": ["bench/gates/node/results.csv"],
    }
    values = all_metrics()["gates.speedup"].compute(Inputs(tmp_path, paths, {})).values
    assert values["project"] == "node-bench" and values["mutations"] == 4
    assert values["median_ratio"] == pytest.approx((5.0 + 1.0) / 2, abs=1e-3)
    assert (values["missed_by_impacted"], values["missed_after_both"]) == (1, 0)
    assert values["whole_suite_selections"] == 1
    assert summary["failing_stage"] == {"tests:full": 1, "tests:impacted": 3}
