from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.bench.task import load_suite
from stepswitch.bench.validate import validate_tasks
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
def test_committed_suites_are_valid():
    tasks = load_suite(SUITES / "general") + load_suite(SUITES / "science")
    invalid = [f"{r.task}: {r.problem}" for r in validate_tasks(tasks, jobs=2) if not r.valid]
    assert invalid == []
