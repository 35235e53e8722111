"""results.csv and the journal's rows: `ResultRow` is a task run as the journal keeps it,
`ResultsCsvRow` its line of results.csv (bench/results.py says what each field means)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, ValidationError

from stepswitch.bench.files.load import BenchFileError, Open, Ours, first_problem, read_text
from stepswitch.bench.plan import RunKey

ContestantKind = Literal["oracle", "null", "policy"]


class ResultRow(Open):
    """One task run (bench/results.py says what each field means)."""

    schema_version: int = 1
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


def _true_or_false(value: object) -> object:
    if isinstance(value, str) and value not in ("true", "false"):
        raise ValueError("is not true or false")
    return value == "true" if isinstance(value, str) else value


CsvBool = Annotated[bool, BeforeValidator(_true_or_false)]  # as the bench writes one: true, false


class ResultsCsvRow(Ours):
    """A line of results.csv: the columns the bench writes, every one of them."""

    task: str
    suite: str
    contestant: str
    contestant_kind: ContestantKind
    attempt: int
    passed: CsvBool
    outcome: str
    reason: str
    verdict: str
    dollars_low: float
    dollars_high: float
    unpriced_steps: int
    tokens: int
    cached_tokens: int
    uncached_tokens: int
    minutes: float
    escalations: int
    steps: int
    refused_tool_calls: int
    model_output_failures: int
    served_other_model: CsvBool
    grading_s: float
    run_id: str
    folder: str

    def row(self) -> ResultRow:
        return ResultRow.model_validate(self.model_dump())


CSV_COLUMNS: tuple[str, ...] = tuple(ResultsCsvRow.model_fields)


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


def results_text(rows: list[ResultRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in sorted(rows, key=lambda r: (r.task, r.contestant, r.attempt)):
        line = ResultsCsvRow.model_validate(row.model_dump(include=set(CSV_COLUMNS)))
        writer.writerow([_cell(v) for v in line.model_dump().values()])
    return out.getvalue()


def parse_results(text: str, name: str) -> list[ResultRow]:
    """The rows of a results.csv; its header must be the bench's columns, in any order."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None) or []
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise BenchFileError(f"{name} has no column {missing[0]}")
    unknown = [c for c in header if c not in CSV_COLUMNS]
    if unknown or len(set(header)) != len(header):
        shown = unknown[0] if unknown else "a column twice"
        raise BenchFileError(f"{name} has {shown!r}, which the bench never writes")
    rows = []
    for line, cells in enumerate(reader, start=2):
        if len(cells) != len(header):
            raise BenchFileError(f"{name}:{line}: {len(cells)} cells, not {len(header)}")
        try:
            rows.append(ResultsCsvRow.model_validate(dict(zip(header, cells, strict=True))).row())
        except ValidationError as exc:
            raise BenchFileError(f"{name}:{line}: {first_problem(exc)}") from None
    return rows


def read_results(path: Path, name: str | None = None) -> list[ResultRow]:
    return parse_results(read_text(path, name), name or path.name)
