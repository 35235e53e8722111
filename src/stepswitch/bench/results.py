"""One row per task run: what the journal keeps, what results.csv shows, what the summary reads.

`outcome` is the run's outcome as run.json says it (done, gates_failed, limit, interrupted,
error), except that a failure of the harness is `harness_error`: grading crashed or gave no
verdict, the task could not be set up, a provider failed before any step, or run_task itself
broke. `passed` is the hidden tests' verdict on the run's committed tree, never true for a
harness error or a run the bench lost mid-way. Every row counts in every denominator.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stepswitch.bench.plan import RunKey

SCHEMA_VERSION = 1
ContestantKind = Literal["oracle", "null", "policy"]

# results.csv, in this order; the dict fields stay in the journal (the summary reads them).
CSV_COLUMNS = (
    "task",
    "suite",
    "contestant",
    "contestant_kind",
    "attempt",
    "passed",
    "outcome",
    "reason",
    "verdict",
    "dollars_low",
    "dollars_high",
    "unpriced_steps",
    "tokens",
    "cached_tokens",
    "uncached_tokens",
    "minutes",
    "escalations",
    "steps",
    "refused_tool_calls",
    "model_output_failures",
    "served_other_model",
    "grading_s",
    "run_id",
    "folder",
)


class ResultRow(BaseModel):
    model_config = ConfigDict(extra="ignore")  # rows written by newer versions still load

    schema_version: int = SCHEMA_VERSION
    task: str  # suite/id
    suite: str
    contestant: str
    contestant_kind: ContestantKind
    attempt: int
    passed: bool = False
    outcome: str  # run.json's outcome, or harness_error
    reason: str = ""
    run_outcome: str = ""  # what run_task recorded ("" when it never returned)
    verdict: str = ""  # the grader's summary ("" when not graded)
    dollars_low: float = 0.0
    dollars_high: float = 0.0
    unpriced_steps: int = 0
    tokens: int = 0  # prompt + completion, cached prompt tokens included
    cached_tokens: int = 0
    uncached_tokens: int = 0
    minutes: float = 0.0  # the agent's wall time
    escalations: int = 0
    steps: int = 0  # model calls
    refused_tool_calls: int = 0
    model_output_failures: int = 0
    served_other_model: bool = False
    served_models: dict[str, str] = Field(default_factory=dict)  # requested -> served, differing
    grading_s: float = 0.0
    run_id: str = ""
    folder: str = ""  # relative to the bench folder
    dollars_by_model: dict[str, list[float]] = Field(default_factory=dict)  # model -> [low, high]
    dollars_by_step_type: dict[str, list[float]] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)  # where the wall time went (s)

    @property
    def key(self) -> RunKey:
        return RunKey(self.task, self.contestant, self.attempt)

    @property
    def harness_error(self) -> bool:
        return self.outcome == "harness_error"


def csv_text(rows: list[ResultRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in sorted(rows, key=lambda r: (r.task, r.contestant, r.attempt)):
        data = row.model_dump()
        writer.writerow([_cell(data[c]) for c in CSV_COLUMNS])
    return out.getvalue()


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


def write_csv(path: Path, rows: list[ResultRow]) -> None:
    staged = path.with_suffix(".csv.tmp")
    staged.write_text(csv_text(rows), encoding="utf-8")
    staged.replace(path)
