"""A run folder (`.ssw/runs/<run-id>/`): run.json rewritten as the run goes, steps.jsonl
appended, logs/ for full gate logs. `load_run` is the one reader the bench, the claims engine and
the page use; it migrates version-1 folders as it reads them, and reads a newer ssw's leniently."""

from __future__ import annotations

import contextlib
import json
import os
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from stepswitch.errors import SswError, UsageError
from stepswitch.records.base import READ_EXTRA
from stepswitch.records.money import CostRange
from stepswitch.records.run import RunIds, RunRecord, Totals
from stepswitch.records.steps import (
    EVENT_KINDS,
    Finish,
    GateRecord,
    GateVerdicts,
    ModelStep,
    ReviewRecord,
    ReviewVerdicts,
    StepEvent,
    ToolCallRecord,
)
from stepswitch.util.config_model import first_problem
from stepswitch.util.text import escape_json_controls

if TYPE_CHECKING:  # old records' models are built only when one is read (load_run)
    from stepswitch.records import v1

_EVENT = TypeAdapter[StepEvent](StepEvent)


class RecordNotWritten(SswError):
    """run.json or steps.jsonl could not be written (a full disk, a read-only folder)."""


class RunFolder:
    def __init__(self, root: Path) -> None:
        self.root = root  # made on the first write: a run refused before it starts leaves nothing
        self.run_path = root / "run.json"
        self.steps_path = root / "steps.jsonl"
        self.logs = root / "logs"
        # steps.jsonl held open: the process that opened it, the descriptor, what closes it
        self._steps: tuple[int, int, weakref.finalize[[int, int], RunFolder]] | None = None

    def write_run(self, record: RunRecord) -> None:
        staged = self.run_path.with_suffix(".json.tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            staged.write_text(
                escape_json_controls(record.model_dump_json(indent=2)), encoding="utf-8"
            )
            staged.replace(self.run_path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                staged.unlink(missing_ok=True)  # a half-written copy only takes space
            raise RecordNotWritten(f"cannot write {self.run_path}: {_why(exc)}") from exc

    def append(self, event: StepEvent) -> None:
        """One line on steps.jsonl, written before this returns (no buffer holds it): the file
        stays open between events, and is opened again should it be removed or moved meanwhile."""
        line = (escape_json_controls(event.model_dump_json()) + "\n").encode("utf-8")
        try:
            fd = self._steps_fd()
            while line:
                line = line[os.write(fd, line) :]
        except OSError as exc:
            raise RecordNotWritten(f"cannot write {self.steps_path}: {_why(exc)}") from exc

    def _steps_fd(self) -> int:
        held = self._steps
        if held is not None and held[0] == os.getpid():
            if _same_file(held[1], self.steps_path):
                return held[1]
            held[2]()  # the file it wrote to was removed or moved: closed now, once
        self.root.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fd = os.open(self.steps_path, flags, 0o666)
        self._steps = (os.getpid(), fd, weakref.finalize(self, _close_own, fd, os.getpid()))
        return fd


def _same_file(fd: int, path: Path) -> bool:
    """Whether `path` is still the file open as `fd`."""
    try:
        there = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)


def _close_own(fd: int, pid: int) -> None:
    """Close `fd` in the process that opened it; a forked child's number may be another file."""
    if os.getpid() == pid:
        with contextlib.suppress(OSError):
            os.close(fd)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


@dataclass(frozen=True)
class LoadedRun:
    folder: Path
    run: RunRecord
    steps: list[StepEvent]
    unknown_events: int = 0  # lines of steps.jsonl of a kind this ssw does not know, skipped

    def of(self, kind: type[Any]) -> list[Any]:
        return [s for s in self.steps if isinstance(s, kind)]

    @property
    def model_steps(self) -> list[ModelStep]:
        return self.of(ModelStep)


def load_run(folder: Path) -> LoadedRun:
    """The run in `folder`, version 1 or 2; a missing or malformed file is a UsageError.

    A folder a newer ssw wrote still loads: a field this ssw does not know (in run.json or in
    an event, at any depth) is ignored, and an event of a `kind` it does not know is skipped and
    counted (`unknown_events`). A known field that does not load is an error all the same."""
    path = folder / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"{folder} is not a run folder: it has no run.json") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it as JSON ({exc})") from exc
    lines = []
    steps_path = folder / "steps.jsonl"
    if steps_path.exists():
        # "\n" alone ends a line: splitlines would also cut at a U+0085 or U+2028 a record held raw.
        text = steps_path.read_text(encoding="utf-8")
        lines = [ln for ln in text.split("\n") if ln.strip()]
    try:
        if data.get("schema_version", 1) == 1:
            from stepswitch.records import v1  # only old records need their models

            old = v1.RunRecord.model_validate(data)
            old_steps = [v1.StepRecord.model_validate_json(line) for line in lines]
            return LoadedRun(folder, _run_from_v1(old), _steps_from_v1(old, old_steps))
        run = RunRecord.read(data)
        steps = [event for line in lines if (event := _event(line)) is not None]
        return LoadedRun(folder, run, steps, unknown_events=len(lines) - len(steps))
    except ValidationError as exc:
        raise UsageError(f"{folder}: a record does not load: {first_problem(exc)}") from exc


def _event(line: str) -> StepEvent | None:
    """One line of steps.jsonl; None for an event of a kind a newer ssw wrote."""
    try:
        return _EVENT.validate_json(line, extra=READ_EXTRA)
    except ValidationError:
        kind = _kind(line)
        if kind is None or kind in EVENT_KINDS:
            raise  # malformed, or a kind this ssw reads that does not load
        return None


def _kind(line: str) -> str | None:
    """The line's `kind`; None when it is no JSON object with one."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


# --- version 1 ---


def _v1_cost(low: float | None, high: float | None) -> CostRange | None:
    if low is None:
        return None
    return CostRange(low=low, high=max(low, high or low))


def _run_from_v1(old: v1.RunRecord) -> RunRecord:
    outcome = "interrupted" if old.outcome == "running" and old.finished_at else old.outcome
    return RunRecord(
        ids=RunIds(run_id=old.run_id, task_id=old.run_id),
        task=old.task,
        branch=old.branch,
        worktree=old.worktree,  # v1 kept absolute machine paths; they stay as written
        base_commit="",
        ssw_version="0.1.0 (schema 1)",
        policy_path=old.policy,
        policy_sha256="",
        policy={},
        scripted=old.scripted,
        tags=old.tags,
        started_at=old.started_at,
        finished_at=old.finished_at,
        outcome=outcome,
        exit_code=old.exit_code,
        reason=old.reason,
        totals=Totals(
            steps=old.steps,
            escalations=old.escalations,
            gate_failures=old.gate_failures,
            model_output_failures=old.model_output_failures,
            prompt_tokens=old.prompt_tokens,
            cached_tokens=old.cached_tokens,
            completion_tokens=old.completion_tokens,
            cost=CostRange(low=old.cost_usd, high=max(old.cost_usd, old.cost_high_usd)),
            unpriced_steps=old.unpriced_steps,
        ),
        commit=old.commit,
    )


def _steps_from_v1(run: v1.RunRecord, old: list[v1.StepRecord]) -> list[StepEvent]:
    events: list[StepEvent] = []
    for seq, s in enumerate(old, start=1):
        base = {"run_id": s.run_id, "seq": seq, "escalation": s.escalation}
        if s.step_type == "gates":
            events.append(
                GateVerdicts(
                    **base,
                    passed=s.note == "passed",
                    failed_gate=s.note.removeprefix("failed: ") if s.note != "passed" else None,
                    gates=[GateRecord(**g.model_dump()) for g in s.gate],
                    timings=s.gate_timings,
                )
            )
        elif s.step_type == "review_verdicts" and s.review is not None:
            events.append(ReviewVerdicts(**base, review=ReviewRecord(**s.review.model_dump())))
        else:
            events.append(
                ModelStep(
                    **base,
                    step=s.index,
                    **s.model_dump(
                        include={
                            "step_type",
                            "worker",
                            "provider",
                            "model",
                            "effort",
                            "scripted",
                            "duration_s",
                            "prompt_tokens",
                            "cached_tokens",
                            "cache_write_tokens",
                            "completion_tokens",
                            "reasoning_tokens",
                            "usage_reported",
                            "attempts",
                            "prompt_repeat_share",
                            "finish_reason",
                            "request_id",
                            "model_output_failure",
                            "note",
                            "error",
                        }
                    ),
                    cost=_v1_cost(s.cost_usd, s.cost_high_usd),
                    tool_calls=[
                        ToolCallRecord(
                            **t.model_dump(exclude={"output_excerpt"}), output=t.output_excerpt
                        )
                        for t in s.tool_calls
                    ],
                    review=ReviewRecord(**s.review.model_dump()) if s.review else None,
                )
            )
    if run.outcome != "running":
        seq = len(events) + 1
        events.append(
            Finish(
                run_id=run.run_id,
                seq=seq,
                escalation=run.escalations,
                outcome=run.outcome,
                reason=run.reason,
                exit_code=run.exit_code or 0,
                commit=run.commit,
            )
        )
    return events
