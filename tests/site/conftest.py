"""Runs for the page and the dashboard: the real scripted demo task through `run_local` (once per
session), and small version-2 run folders and bench run folders written here by hand, laid out as
`ssw bench run` lays them out: tasks/<task>/<contestant>/<attempt>/ plus results.csv and
summary.json."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stepswitch.bench.files import Paired, ResultRow, json_text
from stepswitch.bench.results import csv_text
from stepswitch.bench.summary import summary_file
from stepswitch.cli.run import RunOptions, run_local
from stepswitch.demo.demo import POLICY, SCRIPT, TASK, prepare_sample
from stepswitch.records.folder import RunFolder
from stepswitch.records.money import CostRange
from stepswitch.records.run import RunIds, RunRecord, Totals
from stepswitch.records.steps import (
    Escalation,
    Finish,
    GateRecord,
    GateVerdicts,
    ModelStep,
    ReviewRecord,
    ReviewVerdicts,
    StepEvent,
    ToolCallRecord,
)

WORKERS = {
    "small": {"provider": "anthropic", "model": "claude-haiku-4-5"},
    "large": {"provider": "anthropic", "model": "claude-opus-5"},
}
FAILED_REPORT = "tests: 1 failed, 3 passed\nFAILED tests/test_ops.py::test_mean - assert 2.5 == 2.0"


@dataclass(frozen=True)
class DemoRun:
    repo: Path
    folder: Path
    record: RunRecord


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The demo task, run for real on the sample repository with the demo's scripted replies."""
    repo = prepare_sample(tmp_path_factory.mktemp("demo") / "sample")
    options = RunOptions(
        repo=repo,
        task=TASK,
        policy_path=POLICY,
        script=SCRIPT,
        ledger_path=repo / ".ssw" / "ledger.sqlite",
    )
    record = run_local(options, lambda line: None)
    return DemoRun(repo, repo / ".ssw" / "runs" / record.run_id, record)


def model_step(seq: int, step: int, step_type: str, worker: str, **extra: Any) -> ModelStep:
    fields: dict[str, Any] = {
        "run_id": "r",
        "seq": seq,
        "step": step,
        "step_type": step_type,
        "worker": worker,
        "provider": WORKERS[worker]["provider"],
        "model": WORKERS[worker]["model"],
        "prompt_tokens": 1000 * step,
        "cached_tokens": 400 * step,
        "completion_tokens": 50,
        "cost": CostRange.exact(0.001 * step),
        "attempts": 1,
        **extra,
    }
    return ModelStep(**fields)


def events(run_id: str, *, fail_once: bool, escalate: bool) -> list[StepEvent]:
    """plan, edit (a refused tool call), gates (failing once), escalation, review, finish."""
    found: list[StepEvent] = [
        model_step(1, 1, "plan", "large", tool_calls=[_call("done", '{"summary": "1. fix"}')]),
        model_step(
            2,
            2,
            "edit",
            "small",
            tool_calls=[
                _call(
                    "edit",
                    '{"path": "../etc/passwd"}',
                    ok=False,
                    refused=True,
                    output="refused: ../etc/passwd is outside the worktree",
                ),
                _call("edit", '{"path": "calc/ops.py"}', output="edited calc/ops.py"),
            ],
        ),
    ]
    seq = 3
    if fail_once:
        found.append(
            GateVerdicts(
                run_id=run_id,
                seq=seq,
                passed=False,
                failed_gate="tests",
                gates=[
                    GateRecord(name="tests", passed=False, duration_s=1.2, report=FAILED_REPORT)
                ],
            )
        )
        seq += 1
    if escalate:
        found.append(
            Escalation(
                run_id=run_id,
                seq=seq,
                escalation=1,
                to_level=1,
                to_worker="large",
                reason="2 gate failures",
            )
        )
        seq += 1
    found.append(
        GateVerdicts(
            run_id=run_id,
            seq=seq,
            passed=True,
            gates=[GateRecord(name="tests", passed=True, duration_s=0.8, report="tests: passed")],
        )
    )
    found.append(
        model_step(
            seq + 1,
            3,
            "review",
            "large",
            review=ReviewRecord(verdict="approve", reasons="divides by the count now"),
        )
    )
    found.append(
        ReviewVerdicts(
            run_id=run_id,
            seq=seq + 2,
            review=ReviewRecord(
                verdict="approve",
                reasons="divides by the count now",
                second_opinion="reject",
                second_reasons="an empty list still divides by zero",
                agree=False,
            ),
        )
    )
    found.append(
        Finish(run_id=run_id, seq=seq + 3, outcome="done", reason="the gates passed", exit_code=0)
    )
    return [e.model_copy(update={"run_id": run_id}) for e in found]


def _call(name: str, arguments: str, **extra: Any) -> ToolCallRecord:
    return ToolCallRecord(name=name, arguments=arguments, ok=extra.pop("ok", True), **extra)


def write_run(
    folder: Path,
    *,
    run_id: str,
    task: str = "calc.ops.mean divides by one value too many",
    contestant: str | None = None,
    bench_id: str | None = None,
    policy_path: str = "bench/policies/ladder.toml",
    outcome: str = "done",
    fail_once: bool = False,
    escalate: bool = False,
    scripted: bool = False,
    tags: dict[str, str] | None = None,
    started_at: str = "2026-12-01T10:00:00+00:00",
    extra_events: list[StepEvent] | None = None,
) -> Path:
    """A version-2 run folder, as `run_task` leaves it."""
    steps = events(run_id, fail_once=fail_once, escalate=escalate) + list(extra_events or [])
    if scripted:
        steps = [
            s.model_copy(update={"scripted": True}) if isinstance(s, ModelStep) else s
            for s in steps
        ]
    models = [s for s in steps if isinstance(s, ModelStep)]
    cost = sum((s.cost or CostRange() for s in models), CostRange())
    record = RunRecord(
        ids=RunIds(run_id=run_id, task_id=run_id, bench_id=bench_id, contestant=contestant),
        task=task,
        branch=f"ssw/{run_id}",
        worktree=f".ssw/worktrees/{run_id}",
        base_commit="0" * 40,
        ssw_version="0.1.0",
        policy_path=policy_path,
        policy_sha256="f" * 64,
        policy={"workers": WORKERS},
        scripted=scripted,
        tags=tags or {},
        started_at=started_at,
        finished_at=None if outcome == "running" else "2026-12-01T10:01:00+00:00",
        elapsed_s=None if outcome == "running" else 60.0,
        outcome=outcome,  # type: ignore[arg-type]
        exit_code=None if outcome == "running" else 0,
        reason="" if outcome == "running" else "the gates passed",
        gates_verdict="passed",
        review_verdict="approve",
        totals=Totals(
            steps=len(models),
            escalations=int(escalate),
            gate_failures=int(fail_once),
            prompt_tokens=sum(s.prompt_tokens for s in models),
            cached_tokens=sum(s.cached_tokens for s in models),
            completion_tokens=sum(s.completion_tokens for s in models),
            cost=cost,
        ),
    )
    out = RunFolder(folder)
    out.write_run(record)
    for step in steps if outcome != "running" else steps[:2]:
        out.append(step)
    return folder


BENCH_TASKS = ("general/mean_bug", "general/median_feature")  # suite/task, as the bench names them
CONTESTANTS = ("ladder", "ultra")


def write_bench(
    root: Path,
    *,
    results: bool = True,
    summary: bool = True,
    oracle: bool = False,
    null: bool = False,
    tasks: tuple[str, ...] = BENCH_TASKS,
) -> Path:
    """A bench run folder with two contestants (and the built-in oracle and null when asked) on
    each task. A built-in's records are as the bench writes them: its policy `builtin:<name>`,
    its one worker on the scripted preset, so the run and its steps say scripted."""
    rows = []
    builtins = (("oracle",) if oracle else ()) + (("null",) if null else ())
    contestants = CONTESTANTS + builtins
    for ti, task in enumerate(tasks):
        for ci, contestant in enumerate(contestants):
            folder = root / "tasks" / task / contestant / "0"
            run_id = f"bench1.{task.replace('/', '.')}.{contestant}.0"
            write_run(
                folder,
                run_id=run_id,
                task=f"the {task} task",
                contestant=contestant,
                bench_id="bench1",
                policy_path=(
                    f"builtin:{contestant}"
                    if contestant in builtins
                    else f"bench/policies/{contestant}.toml"
                ),
                fail_once=ci == 0 and ti == 0,
                escalate=ci == 0 and ti == 0,
                scripted=contestant in builtins,
                tags={"kind": contestant if contestant in builtins else "policy"},
            )
            passed = not (ci == 1 and ti == 1)
            rows.append(  # results.csv as `ssw bench run` writes it (bench/files/)
                ResultRow(
                    task=task,
                    suite=task.split("/")[0],
                    contestant=contestant,
                    contestant_kind=contestant if contestant in builtins else "policy",
                    attempt=0,
                    passed=passed,
                    outcome="done",
                    verdict="4 passed" if passed else "1 failed, 3 passed",
                    run_id=run_id,
                    folder=f"tasks/{task}/{contestant}/0",
                )
            )
    (root / "run.json").write_text(json.dumps({"bench_id": "bench1", "suite": "general"}))
    if results:
        (root / "results.csv").write_text(csv_text(rows))
    if summary:
        kinds = [(c, c if c in builtins else "policy") for c in contestants]
        made = summary_file(
            rows, bench_id="bench1", contestants=kinds, planned=len(rows), resamples=10
        )
        common = {"a": "ladder", "b": "ultra", "n": len(tasks), "level": 0.95}
        paired = [  # fixed figures, in summary.json's "paired" entries
            {**common, "metric": "dollars per task run, ratio a / b", "estimate": 0.42,
             "low": 0.31, "high": 0.55, "method": "cluster bootstrap over tasks"},
            {**common, "metric": "pass rate, difference a - b", "estimate": 0.5,
             "low": 0.0, "high": 1.0, "method": "cluster bootstrap over tasks"},
            {**common, "metric": "dollars per task, difference", "estimate": -0.0123,
             "low": -0.02, "high": -0.004, "method": ""},
        ]  # fmt: skip
        made.paired = [Paired.model_validate(p) for p in paired]
        (root / "summary.json").write_text(json_text(made))
    return root


@pytest.fixture
def bench_run(tmp_path: Path) -> Path:
    return write_bench(tmp_path / "bench" / "runs" / "bench1")


@pytest.fixture
def page_of(tmp_path: Path) -> Iterator[Any]:
    """Build the page from folders and return its HTML."""
    from stepswitch.site.build import build_site

    def build(*folders: Path) -> str:
        built = build_site(list(folders), tmp_path / "site")
        return built.page.read_text(encoding="utf-8")

    yield build
