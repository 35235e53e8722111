"""One owner per step: the session writes each model step's record once, typed, and run.json's
totals are a function of the model_step events in steps.jsonl, however the run ends.

The interrupted run is `ssw run` as a real process whose `run` tool command makes a FIFO, says
so with a marker file in its scratch TMPDIR and then blocks reading that FIFO; the test sends
SIGINT once the marker is there, so the signal lands while the step's tool runs."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from stepswitch.records.folder import load_run
from stepswitch.records.money import CostRange
from stepswitch.records.run import Totals
from stepswitch.records.steps import Escalation, GateVerdicts, ModelStep, StepEvent
from tests.harness.cli import ssw_env
from tests.harness.repo import sample_repo
from tests.harness.task import (
    done,
    explore,
    fix_the_bug,
    run_command,
    run_ssw,
    tool,
    whole_fix,
)

MARKER = "ssw-step-tool-started"
HOLD = f'mkfifo "$TMPDIR/hold" && touch "$TMPDIR/{MARKER}" && read _ < "$TMPDIR/hold"'


def sums(events: list[StepEvent]) -> dict[str, object]:
    """What steps.jsonl's model_step events add up to: steps, tokens and dollars."""
    steps = [e for e in events if isinstance(e, ModelStep)]
    cost = CostRange()
    for s in steps:
        cost = cost + (s.cost or CostRange())
    return {
        "steps": len(steps),
        "prompt_tokens": sum(s.prompt_tokens for s in steps),
        "cached_tokens": sum(s.cached_tokens for s in steps),
        "completion_tokens": sum(s.completion_tokens for s in steps),
        "cost": (round(cost.low, 9), round(cost.high, 9)),
        "unpriced_steps": sum(s.cost is None for s in steps),
    }


def counted(totals: Totals) -> dict[str, object]:
    return {
        "steps": totals.steps,
        "prompt_tokens": totals.prompt_tokens,
        "cached_tokens": totals.cached_tokens,
        "completion_tokens": totals.completion_tokens,
        "cost": (round(totals.cost.low, 9), round(totals.cost.high, 9)),
        "unpriced_steps": totals.unpriced_steps,
    }


@pytest.fixture
def started(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)


def _wait_for(proc: subprocess.Popen[str], found: Callable[[], bool], err: Path) -> None:
    """Poll until `found()` holds; the limit only stops a hung test, it asserts nothing."""
    end = time.monotonic() + 180
    while not found():
        if proc.poll() is not None:
            raise AssertionError(
                f"the run ended (exit {proc.returncode}) first:\n{err.read_text()}"
            )
        assert time.monotonic() < end, err.read_text()
        time.sleep(0.05)


def test_a_finished_run_totals_are_the_sums_of_its_model_steps(tmp_path: Path) -> None:
    from stepswitch.records.run import totals_of

    repo = sample_repo(tmp_path / "repo", "mean_bug")
    run = run_ssw(tmp_path, repo, whole_fix())
    assert run.record.outcome == "done"
    assert counted(run.saved.totals) == sums(run.events)
    assert run.saved.totals == totals_of(run.events).model_copy(
        update={"ledger": run.saved.totals.ledger, "cost": run.saved.totals.cost}
    )


@pytest.mark.slow
def test_sigint_while_a_steps_tool_runs_leaves_run_json_agreeing_with_steps_jsonl(
    tmp_path: Path, started: list[subprocess.Popen[str]]
) -> None:
    repo = sample_repo(tmp_path / "repo", "mean_bug")
    replies = [*explore()[:3], tool("run", command=HOLD), done("ran"), *fix_the_bug()]
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    command = run_command(tmp_path, repo, replies)
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("w") as o, err.open("w") as e:
        proc = subprocess.Popen(
            command, stdout=o, stderr=e, stdin=subprocess.DEVNULL, text=True,
            env=ssw_env(TMPDIR=str(scratch)),
        )  # fmt: skip
    started.append(proc)
    _wait_for(proc, lambda: any(scratch.glob(f"ssw-home-*/tmp/{MARKER}")), err)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=180) == 130, err.read_text()

    [folder] = list((repo / ".ssw" / "runs").iterdir())
    loaded = load_run(folder)
    assert loaded.run.outcome == "interrupted"
    assert counted(loaded.run.totals) == sums(loaded.steps)
    # The step whose tool was running is recorded, saying the run ended under it.
    last = loaded.model_steps[-1]
    assert (last.step_type, last.step) == ("run", 4)
    assert last.error is not None and "interrupted" in last.error
    # The ledger's account agrees too: every call it holds is a recorded step.
    ledger = loaded.run.totals.ledger
    assert ledger is not None
    assert (round(ledger.low, 9), round(ledger.high, 9)) == sums(loaded.steps)["cost"]
    data = json.loads((folder / "run.json").read_text())
    assert data["totals"]["steps"] == len(loaded.model_steps)


def test_a_step_record_with_an_unknown_field_is_refused_not_dropped() -> None:
    fields: dict[str, object] = {
        "run_id": "r",
        "seq": 1,
        "step": 1,
        "step_type": "plan",
        "worker": "large",
        "provider": "scripted",
        "model": "scripted-large",
    }
    ModelStep.model_validate(fields)
    with pytest.raises(ValidationError, match="stepp"):
        ModelStep.model_validate({**fields, "stepp": 2})
    with pytest.raises(ValidationError):
        ModelStep.model_validate_json(json.dumps({**fields, "kind": "model_step", "tokens": 3}))


def test_totals_are_one_function_of_the_events() -> None:
    from stepswitch.records.run import totals_of

    def step(seq: int, worker: str, cost: CostRange | None, **extra: object) -> ModelStep:
        fields = {"step_type": "edit", "provider": "scripted", "model": "m", **extra}
        return ModelStep.model_validate(
            {"run_id": "r", "seq": seq, "step": seq, "worker": worker, "cost": cost, **fields}
        )

    events: list[StepEvent] = [
        step(1, "mid", CostRange(low=0.1, high=0.2), prompt_tokens=10, completion_tokens=2),
        GateVerdicts(run_id="r", seq=2, passed=False, failed_gate="tests"),
        Escalation(run_id="r", seq=3, to_level=1, to_worker="large", reason="gates"),
        step(4, "large", None, model_output_failure="prose_instead_of_tool_call"),
        step(5, "large", CostRange(low=0.3, high=0.3), cached_tokens=4, reasoning_tokens=1),
        GateVerdicts(run_id="r", seq=6, passed=True),
    ]
    t = totals_of(events)
    assert (t.steps, t.unpriced_steps, t.model_output_failures) == (3, 1, 1)
    assert (t.escalations, t.gate_failures) == (1, 1)
    assert (t.prompt_tokens, t.cached_tokens, t.completion_tokens, t.reasoning_tokens) == (
        10, 4, 2, 1,
    )  # fmt: skip
    assert t.cost == CostRange(low=0.1, high=0.2) + CostRange(low=0.3, high=0.3)
    assert t.by_worker == {
        "mid": CostRange(low=0.1, high=0.2),
        "large": CostRange(low=0.3, high=0.3),
    }
