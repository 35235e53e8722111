from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.bench.task import load_suite
from stepswitch.bench.validate import CHECKS, validate_tasks
from stepswitch.gates.config import GoldenGate, ProtectedGate, read_gate_config

SUITES = Path(__file__).resolve().parents[2] / "bench" / "suites"


def test_committed_suites_load_and_have_enough_tasks():
    general = load_suite(SUITES / "general")
    science = load_suite(SUITES / "science")
    assert len(general) >= 14
    assert {t.spec.kind for t in general} == {"bugfix", "feature", "refactor"}
    assert len(science) >= 7
    for task in science:
        config = read_gate_config(task.repo)
        assert config is not None, task.name
        kinds = {type(g) for g in config.gates}
        assert {GoldenGate, ProtectedGate} <= kinds, task.name
        protected = [g for g in config.gates if isinstance(g, ProtectedGate)]
        assert any(g.constants for g in protected), task.name


@pytest.mark.slow
def test_a_sample_of_the_committed_suites_validates():
    # Every task of every suite is validated by .ci/run's own `ssw bench validate` step (21 tasks
    # of general and science took ~55 s here on two cores, 2026-12-01). This keeps one task per
    # suite, run side by side: a science task, so its golden and protected gates run on the
    # reference, and a general feature, whose start fails because the new function is missing.
    by_name = {t.name: t for t in load_suite(SUITES / "general") + load_suite(SUITES / "science")}
    sample = [by_name["general/markdown-toc"], by_name["science/rk4-step"]]
    results = list(validate_tasks(sample, jobs=2))
    invalid = [f"{r.task}: {r.problem}" for r in results if not r.valid]
    assert invalid == []
    for r in results:
        assert [c.name for c in r.checks] == list(CHECKS), r.task
    config = read_gate_config(sample[1].repo)
    assert config is not None
    gates = [g.name for g in config.gates if isinstance(g, GoldenGate | ProtectedGate)]
    found = {c.name: c.found for c in results[1].checks}
    assert found["reference_gates"] == "passed: " + ", ".join(gates)
