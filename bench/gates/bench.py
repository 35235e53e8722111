"""Measure the impacted-first gate against the full suite on the mutations in mutations.json.

For each mutation, applied to the target project's working tree:

(a) impacted first, as the tests gate runs it: time `impacted_tiers(root, [module])` in this
    process, then `pytest -x` on the nearest ring of impacted test files, then (when the gate
    would) on the wider ring. A failing verdict ends (a). If no impacted stage fails, the impacted
    stages missed the mutation: the full suite (`pytest -x`) runs next, and (a)'s time is the sum.
(b) full suite: `pytest -x` on the whole suite until it exits, the first verdict without a
    selection.

Both use the same flags and process environment; the order is (a, b) for even rows and (b, a)
for odd ones; the mutation is reverted after each row. The full suite is also run once without
-x on the clean tree, for reference. Writes results.csv and summary.json.

(c), a what-if measured after (a) and (b), labelled as such and not part of the targets: the
same as (a), but with the selection that impacted_tests() makes on a copy of the project's .py
files without its conftest.py files, i.e. without the rule "every test beside and below a
conftest.py that imports a changed module is impacted". The tests still run in the real project.

Run with the stepswitch venv: `.venv/bin/python bench/gates/bench.py`.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import common

from stepswitch.gates.impacted import impacted_tests, impacted_tiers
from stepswitch.gates.staged_tests import WIDER_STAGE_SHARE

TARGET_RATIO = 5.0

# The first cells of every row (row_head), here and in node_bench.py's.
HEAD_FIELDS = ["id", "module", "line", "kind", "before", "after", "order"]
FIELDS = [
    *HEAD_FIELDS,
    "selected_files",
    "total_test_files",
    "selection_s",
    "impacted_pytest_s",
    "impacted_rc",
    "impacted_first_failure",
    "missed_by_impacted",
    "full_after_miss_s",
    "caught_by_full_stage",
    "impacted_first_verdict_s",
    "full_first_verdict_s",
    "full_rc",
    "full_first_failure",
    "ratio",
    "whatif_selected_files",
    "whatif_missed",
    "whatif_first_verdict_s",
    "whatif_ratio",
]


def test_files(root: Path) -> list[str]:
    """The suite's test files, as pytest's default patterns name them."""
    found = {p for p in root.joinpath("tests").rglob("test_*.py")}
    found |= {p for p in root.joinpath("tests").rglob("*_test.py")}
    return sorted(p.relative_to(root).as_posix() for p in found)


def shadow_without_conftest() -> Path:
    """A copy of the project's .py files and pyproject.toml, less every conftest.py: what
    impacted_tests() sees there is the import graph without the conftest fan-out."""
    shadow = common.WORK / "shadow-no-conftest"
    shutil.rmtree(shadow, ignore_errors=True)
    for path in common.PROJECT.rglob("*.py"):
        rel = path.relative_to(common.PROJECT)
        if rel.parts[0] == ".git" or "__pycache__" in rel.parts or rel.name == "conftest.py":
            continue
        (shadow / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, shadow / rel)
    shutil.copyfile(common.PROJECT / "pyproject.toml", shadow / "pyproject.toml")
    return shadow


def impacted_stages(module: str, graph_root: Path) -> list[list[str]]:
    """The impacted stages as the tests gate runs them: the nearest ring (changed tests, direct
    importers, tests under a conftest that imports the module directly), then the wider ring
    when, with the nearest, it is at most WIDER_STAGE_SHARE of the suite."""
    nearest, wider, total = impacted_tiers(graph_root, [module])
    stages = [nearest or wider]
    if nearest and wider and len(nearest) + len(wider) <= total * WIDER_STAGE_SHARE:
        stages.append(wider)
    return [files for files in stages if files]


def impacted_first(module: str, graph_root: Path = common.PROJECT) -> dict[str, object]:
    began = time.perf_counter()
    stages = impacted_stages(module, graph_root)
    selection_s = time.perf_counter() - began
    pytest_s = 0.0
    run = None
    for files in stages:
        run = common.run_pytest(files)
        pytest_s += run.seconds
        if not (run.failed or run.passed):
            raise SystemExit(f"{module}: an impacted stage neither passed nor failed:\n{run.tail}")
        if run.failed:
            break
    impacted_s = selection_s + pytest_s
    row: dict[str, object] = {
        "selected_files": sum(len(files) for files in stages),
        "selection_s": selection_s,
        "impacted_pytest_s": pytest_s,
        "impacted_rc": run.rc if run else "",
        "impacted_first_failure": run.first_failure if run else "",
    }
    if run is not None and run.failed:
        row.update(missed_by_impacted=False, full_after_miss_s="", caught_by_full_stage="")
        row["impacted_first_verdict_s"] = impacted_s
    else:
        full = common.run_pytest([])
        row.update(
            missed_by_impacted=True,
            full_after_miss_s=full.seconds,
            caught_by_full_stage=full.failed,
            impacted_first_verdict_s=impacted_s + full.seconds,
        )
        if not full.failed:
            print(f"  full stage did not fail either (rc {full.rc}): {full.tail}", flush=True)
    return row


def full_suite() -> dict[str, object]:
    run = common.run_pytest([])
    if not run.failed:
        print(f"  the full suite did not fail (rc {run.rc}): {run.tail}", flush=True)
    return {
        "full_first_verdict_s": run.seconds,
        "full_rc": run.rc,
        "full_first_failure": run.first_failure,
    }


def what_if(module: str, shadow: Path) -> dict[str, object]:
    row = impacted_first(module, shadow)
    return {
        "whatif_selected_files": row["selected_files"],
        "whatif_missed": row["missed_by_impacted"],
        "whatif_first_verdict_s": row["impacted_first_verdict_s"],
    }


def row_head(index: int, mutation: dict[str, object], total_files: int) -> dict[str, object]:
    """A result row's first cells: the mutation, and the order of its runs ((a, b) on even
    rows, (b, a) on odd ones)."""
    return {
        "id": mutation["id"],
        "module": str(mutation["module"]),
        "line": mutation["line"],
        "kind": mutation["kind"],
        "before": str(mutation["before"]).strip(),
        "after": str(mutation["after"]).strip(),
        "order": "ab" if index % 2 == 0 else "ba",
        "total_test_files": total_files,
    }


def measure(
    index: int, mutation: dict[str, object], total_files: int, shadow: Path
) -> dict[str, object]:
    row = row_head(index, mutation, total_files)
    module, order = str(row["module"]), str(row["order"])
    original = common.apply_mutation(mutation)
    try:
        for stage in order:
            row.update(impacted_first(module) if stage == "a" else full_suite())
        row.update(what_if(module, shadow))
    finally:
        common.revert(mutation, original)
    full_s = float(str(row["full_first_verdict_s"]))
    row["ratio"] = full_s / float(str(row["impacted_first_verdict_s"]))
    row["whatif_ratio"] = full_s / float(str(row["whatif_first_verdict_s"]))
    return row


def rounded(row: dict[str, object]) -> dict[str, object]:
    digits = {"selection_s": 5}
    return {k: round(v, digits.get(k, 3)) if isinstance(v, float) else v for k, v in row.items()}


def spread(values: list[float], digits: int = 3) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def impacted_source_hash() -> str:
    """Which impacted.py was measured: it is still being written."""
    import stepswitch.gates.impacted as impacted

    return hashlib.sha256(Path(impacted.__file__).read_bytes()).hexdigest()[:16]


def pytest_version() -> str:
    cmd = [str(common.VENV_PYTHON), "-c", "import pytest; print(pytest.__version__)"]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


def summarise(
    rows: list[dict[str, object]],
    collected: tuple[int, int],
    files: list[str],
    reference_s: float,
    cold_s: float,
    load: tuple[tuple[float, ...], tuple[float, ...]],
    runtime_s: float,
) -> dict[str, object]:
    ratios = [float(str(r["ratio"])) for r in rows]
    missed = [r for r in rows if r["missed_by_impacted"] is True]
    caught = [r for r in missed if r["caught_by_full_stage"] is True]
    whole = [r for r in rows if r["selected_files"] == len(files)]
    narrower = [float(str(r["ratio"])) for r in rows if r["selected_files"] != len(files)]
    not_reproduced = [r["id"] for r in rows if r["full_rc"] not in (1, 2)]
    per_module: dict[str, dict[str, object]] = {}
    for module in sorted({str(r["module"]) for r in rows}):
        mine = [r for r in rows if r["module"] == module]
        per_module[module] = {
            "mutations": len(mine),
            "selected_files": sorted({int(str(r["selected_files"])) for r in mine}),
            "median_ratio": round(statistics.median(float(str(r["ratio"])) for r in mine), 2),
            "missed_by_impacted": sum(r["missed_by_impacted"] is True for r in mine),
            "whatif_selected_files": sorted({int(str(r["whatif_selected_files"])) for r in mine}),
            "whatif_median_ratio": round(
                statistics.median(float(str(r["whatif_ratio"])) for r in mine), 2
            ),
        }
    median_ratio = statistics.median(ratios)
    return {
        "project": common.PROJECT_NAME,
        "version": common.PROJECT_VERSION,
        "source": f"PyPI sdist {common.PROJECT_NAME}-{common.PROJECT_VERSION}.tar.gz",
        "tests_collected": collected[0],
        "tests_deselected_by_project_addopts": collected[1],
        "test_files": len(files),
        "full_suite_without_x_s": round(reference_s, 2),
        "mutations": len(rows),
        "ratio_full_over_impacted_first": spread(ratios, 2),
        "ratio_when_selection_is_narrower_than_the_suite": (
            {"mutations": len(narrower), **spread(narrower, 2)} if narrower else {"mutations": 0}
        ),
        "selection_is_the_whole_suite": len(whole),
        "impacted_first_verdict_s": spread(
            [float(str(r["impacted_first_verdict_s"])) for r in rows]
        ),
        "full_first_verdict_s": spread([float(str(r["full_first_verdict_s"])) for r in rows]),
        "selection_s": {
            **spread([float(str(r["selection_s"])) for r in rows], 4),
            "first_call_cold": round(cold_s, 4),
        },
        "missed_by_impacted_stage": len(missed),
        "missed_ids": [r["id"] for r in missed],
        "missed_caught_by_full_stage": len(caught),
        "missed_after_both_stages": len(missed) - len(caught),
        "full_suite_did_not_fail": not_reproduced,
        "targets": {
            "median_ratio_at_least_5x": median_ratio >= TARGET_RATIO,
            "zero_missed_after_both_stages": len(missed) == len(caught) and not not_reproduced,
        },
        "what_if_no_conftest_fan_out": {
            "note": "measured, not a target: selection made without the project's conftest.py",
            "ratio": spread([float(str(r["whatif_ratio"])) for r in rows], 2),
            "selection_is_the_whole_suite": sum(
                r["whatif_selected_files"] == len(files) for r in rows
            ),
            "missed_by_impacted_stage": sum(r["whatif_missed"] is True for r in rows),
            "first_verdict_s": spread([float(str(r["whatif_first_verdict_s"])) for r in rows]),
        },
        "per_module": per_module,
        "machine": common.machine_record(load[0], load[1], {"pytest": pytest_version()}),
        "impacted_py_sha256": impacted_source_hash(),
        "pytest_flags": [*common.PYTEST_FLAGS, *common.FAIL_FAST],
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "runtime_s": round(runtime_s, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, help="measure only the first N mutations")
    args = parser.parse_args()
    began = time.perf_counter()
    load_start = os.getloadavg()
    tree = common.stepswitch_tree()
    common.require_setup()
    data = common.load_json(common.MUTATIONS_JSON)
    if (data.get("project"), data.get("version")) != (common.PROJECT_NAME, common.PROJECT_VERSION):
        raise SystemExit("mutations.json is for another project: run mutate.py")
    mutations = data.get("mutations")
    if not isinstance(mutations, list) or not mutations:
        raise SystemExit("mutations.json has no mutations: run mutate.py")
    if args.limit:
        mutations = mutations[: args.limit]

    collected = common.collected_count()
    files = test_files(common.PROJECT)
    print(f"{common.PROJECT_NAME} {common.PROJECT_VERSION}: {collected[0]} tests", flush=True)
    reference = common.run_pytest([], fail_fast=False)  # also warms the bytecode caches
    if reference.rc != 0:
        raise SystemExit(f"the clean suite does not pass:\n{reference.tail}")
    print(f"full suite without -x: {reference.seconds:.1f} s", flush=True)
    cold_began = time.perf_counter()
    impacted_tests(common.PROJECT, [str(mutations[0]["module"])])
    cold_s = time.perf_counter() - cold_began

    shadow = shadow_without_conftest()
    rows: list[dict[str, object]] = []
    for index, mutation in enumerate(mutations):
        row = measure(index, mutation, len(files), shadow)
        rows.append(row)
        print(
            f"{row['id']} {row['module']}:{row['line']} {row['kind']} [{row['order']}] "
            f"selected {row['selected_files']}/{len(files)} "
            f"impacted-first {float(str(row['impacted_first_verdict_s'])):.2f} s"
            f"{' (MISSED)' if row['missed_by_impacted'] else ''}, "
            f"full {float(str(row['full_first_verdict_s'])):.2f} s, "
            f"ratio {float(str(row['ratio'])):.2f}; what-if: "
            f"selected {row['whatif_selected_files']}, ratio {float(str(row['whatif_ratio'])):.2f}"
            f"{' (MISSED)' if row['whatif_missed'] else ''}",
            flush=True,
        )

    with common.RESULTS_CSV.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(common.portable_row(rounded(r)) for r in rows)
    load = (load_start, os.getloadavg())
    summary = tree | summarise(
        rows, collected, files, reference.seconds, cold_s, load, time.perf_counter() - began
    )
    text = common.portable(json.dumps(summary, indent=1))  # no machine path: ADR 0026
    common.SUMMARY_JSON.write_text(text + "\n", encoding="utf-8")
    ratio = summary["ratio_full_over_impacted_first"]
    print(f"median ratio {ratio}, missed by impacted {summary['missed_by_impacted_stage']}")
    print(f"-> {common.RESULTS_CSV}, {common.SUMMARY_JSON}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
