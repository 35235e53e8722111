"""The pre-flight kept per base commit and environment: the next run of the same commit in the
same environment reuses it (no gate runs again, the run says whose it was); another commit or
environment, or a kept file that is not what a pre-flight of these gates gives, runs it again.
Real git repositories and gate commands in tmp_path (docs/decisions/0075)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from stepswitch.gates.baseline import Baseline
from stepswitch.gates.baseline_store import STORE_FOLDER, BaselineStore
from stepswitch.gates.config import read_gate_config
from stepswitch.gates.preflight import GateUnusable, preflight_gates
from stepswitch.gates.suite import GateSuite
from tests.harness.repo import commit_all, sample_repo, write_repo
from tests.harness.task import done, run_ssw

PY = shlex.quote(sys.executable)
# A gate whose output differs at every run: the same report twice means it ran once.
RANDOM_LINT = (
    f"{PY} -c \"import uuid; print('calc/ops.py:1:1: F401 unused'); print(uuid.uuid4()); "
    'raise SystemExit(1)"'
)
GATES = f"""
    [tool.stepswitch.gates.lint]
    command = {json.dumps(RANDOM_LINT)}
"""
CALC = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "pyproject.toml": textwrap.dedent(GATES),
}


def suite_of(root: Path, state: Path, **env: str) -> GateSuite:
    config = read_gate_config(root)
    assert config is not None
    return GateSuite(config, root, {**os.environ, **env}, state_dir=state)


def preflight(suite: GateSuite, run_id: str) -> Baseline:
    try:
        return preflight_gates(suite, "HEAD", run_id=run_id)
    finally:
        suite.close()


def test_a_second_preflight_of_the_same_commit_and_environment_reuses_the_first(
    tmp_path: Path,
) -> None:
    root, state = write_repo(tmp_path / "repo", CALC, commit=True), tmp_path / "state"
    first = preflight(suite_of(root, state), "run-1")
    second_suite = suite_of(root, state)
    second = preflight(second_suite, "run-2")
    assert first.reused_from == "" and second.reused_from == "run-1"
    # The random line repeats: the lint gate did not run again.
    assert [g.report for g in second.gates] == [g.report for g in first.gates]
    assert second.lines()[0] == (
        f"pre-flight: reused from run run-1 (the same base commit {first.base_commit[:12]} and "
        "environment: no gate ran again)"
    )
    assert second.lines()[1] == "gates: before any edit: lint FAILED"
    # The findings it started with judge the change as before.
    assert second.judged == first.judged == {"lint": 1}
    assert second_suite.known_findings["lint"].start == {"calc/ops.py: F401 unused": 1}
    assert second.imports is not None and second.imports.found == {
        "calc": str(root / "calc/__init__.py")
    }


def test_another_commit_or_environment_runs_the_preflight_again(tmp_path: Path) -> None:
    root, state = write_repo(tmp_path / "repo", CALC, commit=True), tmp_path / "state"
    first = preflight(suite_of(root, state), "run-1")
    other_env = preflight(suite_of(root, state, TZ="Pacific/Auckland"), "run-2")
    assert other_env.reused_from == "" and other_env.gates[0].report != first.gates[0].report
    (root / "calc/more.py").write_text("X = 1\n", encoding="utf-8")
    commit_all(root)
    other_commit = preflight(suite_of(root, state, TZ="Pacific/Auckland"), "run-3")
    assert other_commit.reused_from == "" and other_commit.base_commit != first.base_commit


def test_a_kept_baseline_unlike_what_these_gates_give_is_not_reused(tmp_path: Path) -> None:
    root, state = write_repo(tmp_path / "repo", CALC, commit=True), tmp_path / "state"
    first = preflight(suite_of(root, state), "run-1")
    kept = state / STORE_FOLDER / f"{first.base_commit}.json"
    data = json.loads(kept.read_text(encoding="utf-8"))
    # Findings for a gate that passed would let the change keep them: planted, not kept.
    data["gates"][0]["passed"] = True
    kept.write_text(json.dumps(data), encoding="utf-8")
    assert preflight(suite_of(root, state), "run-2").reused_from == ""


def test_no_baseline_is_kept_inside_the_tree_the_gates_judge(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", CALC, commit=True)
    suite = suite_of(root, root / ".ssw" / "cache")
    assert BaselineStore.of(suite) is None
    preflight(suite, "run-1")
    assert preflight(suite_of(root, root / ".ssw" / "cache"), "run-2").reused_from == ""
    assert not (root / ".ssw" / "cache" / STORE_FOLDER).exists()


def test_the_second_ssw_run_of_a_commit_says_whose_preflight_it_reused(tmp_path: Path) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    first = run_ssw(tmp_path, repo, [done("plan")], max_steps=1)
    second = run_ssw(tmp_path, repo, [done("plan")], max_steps=1)
    reused = f"pre-flight: reused from run {first.record.run_id}"
    assert not any(reused in line for line in first.lines)
    assert any(reused in line for line in second.lines), second.lines
    # The first run's gates ran beside its plan's call, their verdict said when it came; the
    # second's kept verdict is said with the run's start, before any call (ADR 0088).
    first_start = next(line for line in first.lines if "gates (detected)" in line)
    second_start = next(line for line in second.lines if "gates (detected)" in line)
    assert "before any edit" not in first_start
    assert any("gates: before any edit" in line for line in first.lines)
    assert reused in second_start and "gates: before any edit" in second_start
    assert [g.name for g in second.saved.baseline_gates] == ["tests:collect"]
    assert second.saved.baseline_gates[0].report == first.saved.baseline_gates[0].report


def test_a_tool_uninstalled_since_the_kept_preflight_is_still_refused(tmp_path: Path) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "ssw-lint-tool").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (tools / "ssw-lint-tool").chmod(0o755)
    gates = '[tool.stepswitch.gates.lint]\ncommand = "ssw-lint-tool"\n'
    files = {**CALC, "pyproject.toml": gates}
    root, state = write_repo(tmp_path / "repo", files, commit=True), tmp_path / "state"
    path = f"{tools}{os.pathsep}{os.environ['PATH']}"
    preflight(suite_of(root, state, PATH=path), "run-1")
    (tools / "ssw-lint-tool").unlink()
    with pytest.raises(GateUnusable, match="command not found: ssw-lint-tool"):
        preflight(suite_of(root, state, PATH=path), "run-2")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_a_reused_preflight_keeps_the_failing_tests_a_suite_gate_started_with(
    tmp_path: Path,
) -> None:
    """Else a reused run would judge a suite that already fails by every failing test."""
    files = {
        "package.json": '{"name": "calc", "private": true}',
        "add.js": "exports.add = (a, b) => a - b;\n",
        "add.test.js": "const test = require('node:test');\n"
        "const assert = require('node:assert');\nconst { add } = require('./add.js');\n"
        "test('adds', () => { assert.strictEqual(add(1, 2), 3); });\n",
        ".stepswitch.toml": '[gates.tests]\nkind = "suite"\nrunner = "node-test"\n'
        'command = "node --test add.test.js"\n',
    }
    root, state = write_repo(tmp_path / "repo", files, commit=True), tmp_path / "state"
    first_suite = suite_of(root, state)
    first = preflight(first_suite, "run-1")
    second_suite = suite_of(root, state)
    second = preflight(second_suite, "run-2")
    assert second.reused_from == "run-1"
    assert second.judged_tests == first.judged_tests == {"tests": 1}
    assert second_suite.known_failures == first_suite.known_failures
