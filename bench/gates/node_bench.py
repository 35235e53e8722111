"""Measure ssw's impacted-first suite gate against the full suite on the Node package of
node/project.json, over the mutations in node/mutations.json (node_mutate.py).

For each mutation, applied to the package's tree, through ssw's own gate code (`GateSuite` with
the one suite gate of node_project.py, as a run builds it, unconfined):
(a) impacted first: `GateSuite.run([module])` with the gate as configured: the runner's
    impacted stage (`tests:impacted`: for node's runner, the test files whose import graph
    reaches the module), then the full suite (`tests:full`) when it passes, or the full suite
    alone when nothing narrower is sound. Its first failing verdict is the SuiteResult's
    `first_failure_s`: from the start of the gate run (checks against the base commit and the
    selection included) to the end of the failing stage.
(b) full suite: the same, with `impacted_first = false`: the full stage alone.

The order is (a, b) on even rows and (b, a) on odd ones; the mutation is reverted after each row.
The clean tree's full suite runs once first (it must pass; it counts the tests). Writes
node/results.csv and node/summary.json in the schema claim C-015's metric `gates.speedup` reads,
with the ssw commit measured and whether its tree was clean.

Run with the stepswitch venv: `.venv/bin/python bench/gates/node_bench.py`.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import common
import node_project
from node_project import FULL_STAGE, IMPACTED_STAGE, NodeTarget

from bench import HEAD_FIELDS, rounded, row_head, spread
from stepswitch.gates.lang.node_graph import test_files
from stepswitch.gates.lang.node_project import words
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.suite_result import SuiteResult

# C-015's bounds, repeated here for the summary's own record; the claim decides.
TARGET_RATIO = 2.0
TARGET_MUTATIONS = 20

FIELDS = [
    *HEAD_FIELDS,
    "selected_files",
    "total_test_files",
    "impacted_why",
    "failing_stage",
    "impacted_first_failure",
    "missed_by_impacted",
    "caught_by_full_stage",
    "impacted_first_verdict_s",
    "impacted_wall_s",
    "full_first_verdict_s",
    "full_wall_s",
    "full_failed",
    "full_first_failure",
    "ratio",
    "load_1m",
]
# The gate code measured: a summary names the sha256 prefix of each.
GATE_CODE = (
    "gates/suite.py",
    "gates/suite_check.py",
    "gates/lang/node.py",
    "gates/lang/node_graph.py",
    "gates/lang/node_reports.py",
)


def suite_test_files(target: NodeTarget) -> list[str]:
    """The test files the gate's command names (its positional words after `node --test`)."""
    found = words(target.tests) or []
    paths = [w for w in found[1:] if not w.startswith("-")]
    return test_files(target.root, paths)


def first_failure(result: SuiteResult) -> str:
    failed = result.failed
    return failed.failed_tests[0] if failed is not None and failed.failed_tests else ""


def impacted_first(suite: GateSuite, module: str, total: int) -> dict[str, object]:
    """Run (a): the gate as configured, impacted stage first."""
    began = time.perf_counter()
    result = suite.run([module])
    wall = time.perf_counter() - began
    stage = node_project.failing_stage(result)
    impacted = [s for s in result.test_stages if s.name == IMPACTED_STAGE]
    missed = bool(impacted) and stage != IMPACTED_STAGE
    return {
        "selected_files": len(result.impacted) if impacted else total,
        "impacted_why": impacted[0].why if impacted else result.test_stages[0].why,
        "failing_stage": stage,
        "impacted_first_failure": first_failure(result),
        "missed_by_impacted": missed,
        "caught_by_full_stage": (stage == FULL_STAGE) if missed else "",
        # A mutation no stage catches has no first failing verdict: its whole run stands in.
        "impacted_first_verdict_s": result.first_failure_s or result.total_s,
        "impacted_wall_s": wall,
    }


def full_suite(suite: GateSuite, module: str) -> dict[str, object]:
    """Run (b): the same gate with the full stage alone."""
    began = time.perf_counter()
    result = suite.run([module])
    wall = time.perf_counter() - began
    return {
        "full_first_verdict_s": result.first_failure_s or result.total_s,
        "full_wall_s": wall,
        "full_failed": not result.passed,
        "full_first_failure": first_failure(result),
    }


def measure(
    index: int,
    mutation: dict[str, object],
    target: NodeTarget,
    suites: dict[str, GateSuite],
    total: int,
) -> dict[str, object]:
    row = row_head(index, mutation, total)
    module, order = str(row["module"]), str(row["order"])
    original = common.apply_mutation(mutation, target.root)
    try:
        for step in order:
            common.wait_quiet(f"{mutation['id']} step {step}")
            if step == "a":
                row.update(impacted_first(suites["a"], module, total))
            else:
                row.update(full_suite(suites["b"], module))
    finally:
        common.revert(mutation, original, target.root)
    full_s = float(str(row["full_first_verdict_s"]))
    row["ratio"] = full_s / float(str(row["impacted_first_verdict_s"]))
    row["load_1m"] = round(os.getloadavg()[0], 2)
    return row


def summarise(
    rows: Sequence[dict[str, object]],
    target: NodeTarget,
    tests: int,
    files: int,
    reference_s: float,
) -> dict[str, object]:
    """What node/summary.json says of the rows, in the keys `gates.speedup` reads (ratios to 2
    decimals, times to 3, as bench.py's summary)."""
    ratios = [float(str(r["ratio"])) for r in rows]
    missed = [r for r in rows if r["missed_by_impacted"] is True]
    caught = [r for r in missed if r["caught_by_full_stage"] is True]
    whole = [r for r in rows if int(str(r["selected_files"])) >= files]
    narrower = [float(str(r["ratio"])) for r in rows if int(str(r["selected_files"])) < files]
    stages: dict[str, int] = {}
    for r in rows:
        stages[str(r["failing_stage"]) or "none"] = (
            stages.get(str(r["failing_stage"]) or "none", 0) + 1
        )
    median_ratio = statistics.median(ratios)
    return {
        "project": target.name,
        "version": target.version,
        "source": f"npm registry tarball {target.spec}, {target.integrity}",
        "runner": target.runner,
        "command": target.tests,
        "tests_collected": tests,
        "test_files": files,
        "full_suite_clean_s": round(reference_s, 2),
        "mutations": len(rows),
        "ratio_full_over_impacted_first": spread(ratios, 2),
        "ratio_when_selection_is_narrower_than_the_suite": (
            {"mutations": len(narrower), **spread(narrower, 2)} if narrower else {"mutations": 0}
        ),
        "selection_is_the_whole_suite": len(whole),
        "selected_files": spread([float(str(r["selected_files"])) for r in rows], 1),
        "failing_stage": dict(sorted(stages.items())),
        "impacted_first_verdict_s": spread(
            [float(str(r["impacted_first_verdict_s"])) for r in rows]
        ),
        "full_first_verdict_s": spread([float(str(r["full_first_verdict_s"])) for r in rows]),
        "missed_by_impacted_stage": len(missed),
        "missed_ids": [r["id"] for r in missed],
        "missed_caught_by_full_stage": len(caught),
        "missed_after_both_stages": len(missed) - len(caught),
        "full_suite_did_not_fail": [r["id"] for r in rows if r["full_failed"] is not True],
        "targets": {
            "median_ratio_at_least_2x": median_ratio >= TARGET_RATIO,
            "zero_missed_after_both_stages": len(missed) == len(caught),
            "at_least_20_mutations": len(rows) >= TARGET_MUTATIONS,
        },
        "load_1m": spread([float(str(r["load_1m"])) for r in rows], 2),
    }


def write_results(
    rows: Sequence[dict[str, object]],
    summary: dict[str, object],
    results_csv: Path = node_project.RESULTS_CSV,
    summary_json: Path = node_project.SUMMARY_JSON,
) -> None:
    """The rows (times to 3 decimals) and the summary, with no machine path (ADR 0026)."""
    results_csv.parent.mkdir(parents=True, exist_ok=True)
    with results_csv.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(common.portable_row(rounded(dict(r))) for r in rows)
    text = common.portable(json.dumps(summary, indent=1))
    summary_json.write_text(text + "\n", encoding="utf-8")


def _version(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()


def machine(load_start: tuple[float, ...]) -> dict[str, object]:
    tools = {"node": _version(["node", "--version"]), "npm": _version(["npm", "--version"])}
    return common.machine_record(load_start, os.getloadavg(), tools)


def code_sha256() -> dict[str, str]:
    src = common.REPO / "src" / "stepswitch"
    return {rel: hashlib.sha256((src / rel).read_bytes()).hexdigest()[:16] for rel in GATE_CODE}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--limit", type=int, help="measure only the first N mutations")
    args = parser.parse_args()
    began = time.perf_counter()
    # When the measurement began, to the second: a claim registered earlier that day is younger
    # than a bare date, which reads as midnight.
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    load_start = os.getloadavg()
    tree = common.stepswitch_tree()
    target = NodeTarget.load()
    node_project.require_setup(target)
    data = common.load_json(node_project.MUTATIONS_JSON)
    if (data.get("project"), data.get("version")) != (target.name, target.version):
        raise SystemExit("node/mutations.json is for another package: run node_mutate.py")
    mutations = data.get("mutations")
    if not isinstance(mutations, list) or not mutations:
        raise SystemExit("node/mutations.json has no mutations: run node_mutate.py")
    if args.limit:
        mutations = mutations[: args.limit]
    files = suite_test_files(target)
    suites = {
        "a": node_project.gate_suite(target, impacted_first=True),
        "b": node_project.gate_suite(target, impacted_first=False),
    }
    common.wait_quiet("the clean suite")
    clean = suites["b"].run(None)
    if not clean.passed:
        raise SystemExit(f"the clean tree fails its gate:\n{clean.report}")
    tests = clean.test_stages[-1].tests or 0
    reference_s = clean.full_s or clean.total_s
    print(f"{target.spec}: {tests} tests in {len(files)} files, {reference_s:.1f} s", flush=True)
    rows: list[dict[str, object]] = []
    try:
        for index, mutation in enumerate(mutations):
            row = measure(index, mutation, target, suites, len(files))
            rows.append(row)
            print(
                f"{row['id']} {row['module']}:{row['line']} {row['kind']} [{row['order']}] "
                f"selected {row['selected_files']}/{len(files)} "
                f"[{row['failing_stage']}] impacted-first "
                f"{float(str(row['impacted_first_verdict_s'])):.2f} s, full "
                f"{float(str(row['full_first_verdict_s'])):.2f} s, "
                f"ratio {float(str(row['ratio'])):.2f}, load {row['load_1m']}",
                flush=True,
            )
    finally:
        for suite in suites.values():
            suite.close()
    summary = (
        tree
        | summarise(rows, target, tests, len(files), reference_s)
        | {
            "installed": node_project.installed(target),
            "machine": machine(load_start),
            "code_sha256": code_sha256(),
            "date": started,
            "runtime_s": round(time.perf_counter() - began, 1),
        }
    )
    write_results(rows, summary)
    ratio = summary["ratio_full_over_impacted_first"]
    print(f"median ratio {ratio}, missed by impacted {summary['missed_by_impacted_stage']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
