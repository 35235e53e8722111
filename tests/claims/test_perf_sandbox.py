"""perf.sandbox: the sandbox's cost is read from each ssw repetition, and a repetition that ran
unconfined is counted, so C-011's bound can fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepswitch.claims.inputs import EvidenceError, Inputs, Unprovable
from stepswitch.claims.metrics import all_metrics

RESULTS = "bench/perf/results.json"


def _run(sandbox: str, per_command_ms: float, overhead_ms: float) -> dict:
    return {
        "sandbox": sandbox,
        "sandbox_per_command_ms": per_command_ms,
        "sandboxed_gate_commands": 2,
        "run_tool_direct": [{"command": "true"}, {"command": "ls -la"}],
        "steps": 40,
        "overhead_per_step_ms": overhead_ms,
    }


def _write(root: Path, ssw_runs: list[dict], mini_ms: list[float]) -> None:
    data = {
        "date": "2026-12-01T12:30:00+00:00",
        "mini_swe_agent": "2.4.6",
        "machine": {"stepswitch_commit": "abc1234", "stepswitch_src_uncommitted_changes": False},
        "overhead": {
            "ssw_runs": ssw_runs,
            "mini_runs": [{"overhead_per_step_ms": m} for m in mini_ms],
        },
    }
    path = root / RESULTS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _compute(root: Path) -> dict:
    inputs = Inputs(root, {"results": [RESULTS]}, {})
    return all_metrics()["perf.sandbox"].compute(inputs).values


def test_the_cost_per_step_is_the_confined_commands_cost_over_the_steps(tmp_path: Path) -> None:
    _write(tmp_path, [_run("bwrap", 10.0, 8.0), _run("bwrap", 12.0, 10.0)], [30.0, 30.0])

    v = _compute(tmp_path)

    assert (v["reps"], v["confined_reps"], v["unconfined_reps"]) == (2, 2, 0)
    assert (v["sandbox"], v["sandboxed_commands"]) == ("bwrap", 4)
    assert v["sandbox_per_command_ms"] == pytest.approx(11.0)
    assert v["sandbox_per_step_ms"] == pytest.approx(11.0 * 4 / 40)
    assert v["ratio"] == pytest.approx(9.0 / 30.0)


def test_a_repetition_without_the_sandbox_is_counted_against_the_claim(tmp_path: Path) -> None:
    _write(tmp_path, [_run("bwrap", 10.0, 8.0), _run("none", 0.0, 6.0)], [30.0, 30.0])

    v = _compute(tmp_path)

    assert v["unconfined_reps"] == 1
    assert v["sandbox"] == "bwrap, none"


def test_results_from_before_the_sandbox_was_measured_cannot_prove_it(tmp_path: Path) -> None:
    run = _run("bwrap", 10.0, 8.0)
    del run["sandbox_per_command_ms"]
    _write(tmp_path, [run], [30.0])

    with pytest.raises(EvidenceError, match="sandbox_per_command_ms"):
        _compute(tmp_path)


def _with_starts(run: dict, direct_s: float, confined_s: float) -> dict:
    """The wrapper starts a repetition timed, as bench/perf/ssw_run.py keeps them."""
    return {
        **run,
        "sandbox_start_samples_s": {"direct": [direct_s] * 3, "confined": [confined_s] * 3},
    }


def test_the_cost_per_command_is_worked_out_again_from_the_starts_it_kept(tmp_path: Path) -> None:
    _write(tmp_path, [_with_starts(_run("bwrap", 10.0, 8.0), 0.001, 0.011)], [30.0])

    assert _compute(tmp_path)["sandbox_per_command_ms"] == pytest.approx(10.0)


def test_a_cost_per_command_its_starts_do_not_give_cannot_prove_it(tmp_path: Path) -> None:
    _write(tmp_path, [_with_starts(_run("bwrap", 5.0, 8.0), 0.001, 0.011)], [30.0])

    with pytest.raises(Unprovable, match="sandbox_per_command_ms"):
        _compute(tmp_path)
