"""One row per task run: what the journal keeps, what results.csv shows, what the summary reads.

`outcome` is the run's outcome as run.json says it (done, gates_failed, limit, interrupted,
error), except that a failure of the harness is `harness_error`: grading crashed or gave no
verdict, the task could not be set up, a provider failed before any step, or run_task itself
broke. `passed` is the hidden tests' verdict on the run's committed tree, never true for a
harness error or a run the bench lost mid-way. Every row counts in every denominator.

The models are in bench/files/ (`ResultRow`, results.csv's `ResultsCsvRow`); results.csv is
written and read there, through them.
"""

from __future__ import annotations

from pathlib import Path

from stepswitch.bench.files import (
    CSV_COLUMNS,
    ContestantKind,
    ResultRow,
    read_results,
    results_text,
    write_file,
)

SCHEMA_VERSION = 1


def csv_text(rows: list[ResultRow]) -> str:
    return results_text(rows)


def write_csv(path: Path, rows: list[ResultRow]) -> None:
    write_file(path, results_text(rows))


__all__ = [
    "CSV_COLUMNS",
    "SCHEMA_VERSION",
    "ContestantKind",
    "ResultRow",
    "csv_text",
    "read_results",
    "write_csv",
]
