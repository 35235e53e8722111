"""load_run reads version-2 folders and migrates version-1 ones as it reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.records.folder import load_run
from stepswitch.records.steps import Finish, GateVerdicts, ModelStep, ReviewVerdicts

V1_RUN = {
    "schema_version": 1, "run_id": "20261129-1", "repo": "/home/u/proj", "branch": "ssw/20261129-1",
    "worktree": "/home/u/proj/.ssw/worktrees/20261129-1", "task": "fix mean",
    "policy": "p.toml", "scripted": True, "started_at": "2026-11-29T10:00:00+00:00",
    "finished_at": "2026-11-29T10:01:00+00:00", "outcome": "done", "exit_code": 0,
    "reason": "the gates passed", "steps": 2, "escalations": 0, "gate_failures": 0,
    "prompt_tokens": 300, "cached_tokens": 100, "completion_tokens": 20, "cost_usd": 0.01,
    "cost_high_usd": 0.03, "commit": "abc123",
}  # fmt: skip
V1_STEPS = [
    {"run_id": "20261129-1", "index": 1, "step_type": "edit", "worker": "mid", "provider": "x",
     "model": "m", "cost_usd": 0.01, "cost_high_usd": 0.03,
     "tool_calls": [{"name": "edit", "arguments": "{}", "ok": True, "output_excerpt": "Edited"}]},
    {"run_id": "20261129-1", "index": 1, "step_type": "gates", "worker": "-", "provider": "-",
     "model": "-", "note": "passed",
     "gate": [{"name": "tests", "passed": True, "duration_s": 1.0}]},
    {"run_id": "20261129-1", "index": 2, "step_type": "review", "worker": "large", "provider": "x",
     "model": "m", "cost_usd": None},
    {"run_id": "20261129-1", "index": 2, "step_type": "review_verdicts", "worker": "-",
     "provider": "-", "model": "-", "review": {"verdict": "approve", "reasons": "ok"}},
]  # fmt: skip


def test_a_version_1_run_folder_loads_as_version_2(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(V1_RUN))
    (tmp_path / "steps.jsonl").write_text("\n".join(json.dumps(s) for s in V1_STEPS) + "\n")

    loaded = load_run(tmp_path)

    run = loaded.run
    assert (run.run_id, run.outcome, run.commit) == ("20261129-1", "done", "abc123")
    assert (run.cost.low, run.cost.high) == (0.01, 0.03)
    assert [type(s) for s in loaded.steps] == [ModelStep, GateVerdicts, ModelStep, ReviewVerdicts,
                                               Finish]  # fmt: skip
    edit = loaded.model_steps[0]
    assert edit.cost is not None and (edit.cost.low, edit.cost.high) == (0.01, 0.03)
    assert edit.tool_calls[0].output == "Edited"
    assert loaded.model_steps[1].cost is None  # unpriced stays unpriced, never $0
    assert [s.seq for s in loaded.steps] == [1, 2, 3, 4, 5]


def test_a_folder_without_run_json_is_a_one_line_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a run folder"):
        load_run(tmp_path)
