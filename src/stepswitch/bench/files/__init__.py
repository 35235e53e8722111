"""The bench's files, typed: what `stepswitch.bench` writes, and what the claims engine and the
replay page read, through one model each and one loader (files/load.py).

- results.csv: one `ResultsCsvRow` per task run (the `CSV_COLUMNS`, in that order); the journal
  keeps the whole `ResultRow`;
- summary.json: `SummaryFile` (bench/summary.py makes it);
- <task run>/grade.json: `GradeFile`, the hidden tests' verdict on the run's committed tree;
- run.json of a bench folder: `BenchRecord` (bench/record.py makes it);
- the record of `ssw bench validate --out FILE`: `ValidationRecord` (bench/validation_record.py
  makes it).

Files the bench alone writes forbid keys it never writes (a hand-edited field is refused, not
ignored). Two stay open: a journal row (`ResultRow`) and run.json ignore keys a newer version
adds, so a resume of an older bench still reads them. A file that does not load is a
`BenchFileError`: one line, the file, the field and what is wrong.
"""

from stepswitch.bench.files.load import (
    GRADE_FILE,
    RESULTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    BenchFileError,
    first_problem,
    json_text,
    parse_json,
    read_json,
    write_file,
)
from stepswitch.bench.files.records import (
    VALIDATE_KIND,
    BenchRecord,
    CheckRecord,
    ContestantRecord,
    GradeFile,
    Session,
    SuiteRecord,
    TaskEntry,
    Totals,
    ValidationRecord,
    VerdictRecord,
)
from stepswitch.bench.files.results import (
    CSV_COLUMNS,
    ContestantKind,
    ResultRow,
    ResultsCsvRow,
    parse_results,
    read_results,
    results_text,
)
from stepswitch.bench.files.summary import (
    Bounds,
    Comparison,
    ContestantSummary,
    GroupStats,
    Interval,
    Method,
    Paired,
    Served,
    Share,
    SummaryFile,
)

__all__ = [
    "CSV_COLUMNS",
    "GRADE_FILE",
    "RESULTS_FILE",
    "RUN_FILE",
    "SUMMARY_FILE",
    "VALIDATE_KIND",
    "BenchFileError",
    "BenchRecord",
    "Bounds",
    "CheckRecord",
    "Comparison",
    "ContestantKind",
    "ContestantRecord",
    "ContestantSummary",
    "GradeFile",
    "GroupStats",
    "Interval",
    "Method",
    "Paired",
    "ResultRow",
    "ResultsCsvRow",
    "Served",
    "Session",
    "Share",
    "SuiteRecord",
    "SummaryFile",
    "TaskEntry",
    "Totals",
    "ValidationRecord",
    "VerdictRecord",
    "first_problem",
    "json_text",
    "parse_json",
    "parse_results",
    "read_json",
    "read_results",
    "results_text",
    "write_file",
]
