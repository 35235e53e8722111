"""Tests that stop testing: a test that ran at the base commit (passed or failed) and is skipped
or xfailed after the change fails `tests:as-before`, named by its id (ADR 0047).

The full stage's `ssw_select` writes which tests it skipped or xfailed (a module skipped whole
counts as its file's id). When it passes with some, the base commit's files of those tests run,
every test past failures, in a check-out of the base commit (in the gates' TMPDIR; the agent's
worktree is never written), and each id of which a test ran there is a failure: the change made
a test stop testing (`pytest.skip()` in the changed code, an xfail, a skipif whose condition the
change made true, a parametrization it emptied: `test[NOTSET]`). A test that failed at the base
counts too: a task usually starts from one, and skipping it is not fixing it. A test already
skipped or xfailed at the base commit stays a skip, and so does a test the base commit does not
have (a new test may skip: nothing it checked before is lost).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from stepswitch.gates.as_before import AS_BEFORE
from stepswitch.gates.config import TestsGate
from stepswitch.gates.context import GateContext
from stepswitch.gates.interpreter import DEFERRED_PATH, gate_environment, project_layout
from stepswitch.gates.pytest_runs import PytestRuns
from stepswitch.gates.runner import Gate, GateResult, run_gate

OUTCOMES_FILE = "outcomes.json"
OUTCOMES_CAP_BYTES = 64 * 1024 * 1024
EMPTY_PARAMETERS = "[NOTSET]"  # pytest's id of a parametrized test given no parameters


def read_outcomes(path: Path) -> tuple[set[str], list[str]]:
    """The ids of the tests that ran (passed or failed), and of those skipped or xfailed, as
    `ssw_select` wrote them to `path`; empty when it wrote nothing readable."""
    try:
        if path.is_symlink() or path.stat().st_size > OUTCOMES_CAP_BYTES:
            return set(), []
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set(), []
    if not isinstance(data, dict):
        return set(), []
    ran, skipped = data.get("ran"), data.get("skipped")
    if not isinstance(ran, list) or not isinstance(skipped, list):
        return set(), []
    return {str(r) for r in ran}, list(dict.fromkeys(str(s) for s in skipped))


def stopped_testing(skipped: Sequence[str], ran_at_base: set[str]) -> list[str]:
    """The ids among `skipped` (tests, modules skipped whole, and `test[NOTSET]`, pytest's id of
    a parametrized test whose parameters are now none) of which a test ran at the base commit."""
    return [s for s in skipped if any(_covers(s, r) for r in ran_at_base)]


def _covers(skipped: str, ran: str) -> bool:
    if skipped.endswith(EMPTY_PARAMETERS):
        return ran.startswith(skipped.removesuffix(EMPTY_PARAMETERS) + "[")
    return ran == skipped or ran.startswith(skipped + "::")


def skipped_at_base_check(
    context: GateContext, runs: PytestRuns, gate: TestsGate, commit: str, skipped: Sequence[str]
) -> GateResult | None:
    """`skipped` (the full stage's skips and xfails) against a run of their files at `commit`:
    a failing `tests:as-before` naming each that ran there, else None."""
    if context.base is None or context.tree is None or not skipped:
        return None
    began = time.monotonic()
    entries = set(context.base.entries(commit))
    files = sorted({s.split("::", 1)[0] for s in skipped} & entries)
    if not files:
        return None
    scratch = context.gate_env.get("TMPDIR") or None
    copy = Path(tempfile.mkdtemp(prefix="ssw-base-", dir=scratch))
    stage = copy.parent / f"{copy.name}-stage"
    try:
        stage.mkdir()
        context.tree.check_out(commit, copy)
        root = copy  # check_out writes the prefix's files at the top of `copy`
        outcomes = stage / OUTCOMES_FILE
        order = [str(root / f) for f in files]
        spec: dict[str, object] = {
            "files": order,
            "order": order,
            "outcomes": str(outcomes),
            "every_test": True,
        }
        env = runs.stage_env(spec, stage, commit, root=root)
        there = gate_environment(root, context.env, context.interpreter, project_layout(root))
        env[DEFERRED_PATH] = there[DEFERRED_PATH]
        command = Gate(AS_BEFORE, gate.stage_command(None), gate.timeout_s)
        ran = run_gate(command, root, env, context.confinement)
        ran_at_base, _ = read_outcomes(outcomes)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)
    stopped = stopped_testing(skipped, ran_at_base)
    if not stopped:
        return None
    report = (
        f"{AS_BEFORE}: failed: tests that ran at the base commit are skipped or xfailed after "
        f"the change: {', '.join(stopped)}. A test that stops testing is a failure, not a pass: "
        "make the change pass them instead of skipping them"
    )
    log = f"{report}\n[ssw: the base commit's run of {', '.join(files)}]\n{ran.log}"
    return GateResult(AS_BEFORE, False, time.monotonic() - began, report, log)
