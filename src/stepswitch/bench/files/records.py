"""The bench's records, typed: a task run's grade.json (`GradeFile`), a bench folder's run.json
(`BenchRecord`, bench/record.py makes it) and the record of `ssw bench validate --out FILE`
(`ValidationRecord`, bench/validation_record.py makes it)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from stepswitch.bench.files.load import Open, Ours
from stepswitch.bench.files.results import ContestantKind

VALIDATE_KIND = "ssw bench validate"


# --- grade.json ---


class VerdictFields(Ours):
    """What one run of a task's tests gave: the fields the grade and the validation share."""

    exit_status: int | None
    report: bool
    tests: int
    failures: int
    errors: int
    skipped: int
    timed_out: str | None
    failing: list[str]


class GradeFile(VerdictFields):
    """The hidden tests' verdict on a task run's committed tree (verdict.TestVerdict)."""

    duration_s: float
    output: str
    tampered: str | None
    sandbox: str
    passed: bool


# --- run.json of a bench folder (bench/record.py says what it records) ---


class ContestantRecord(Open):
    name: str
    kind: ContestantKind
    label: str
    policy_path: str
    policy_sha256: str
    policy: dict[str, Any]
    script: str | None = None
    population: str | None = None  # the simulated population its sim workers met (ADR 0053)


class SuiteRecord(Open):
    name: str
    path: str
    tasks: list[str]
    sha256: str  # of every file of every task folder, by relative path


class Session(Open):
    started_at: str
    finished_at: str | None = None
    # running | complete | interrupted | budget_stop; a session found `running` when the bench
    # resumes died unrecorded: it becomes interrupted, its finished_at left empty (unknown).
    status: str = "running"
    command: list[str] = Field(default_factory=list)
    commit: str | None = None  # of the code this session ran
    workers: int = 1
    executor: str = ""
    budget_usd_total: float | None = None
    ran: int = 0  # task runs finished in this session


class BenchRecord(Open):
    schema_version: int = 1
    bench_id: str
    command: list[str]  # of the first session
    ssw_version: str
    commit: str | None
    dirty: bool | None  # the source tree had uncommitted changes
    versions: dict[str, str]
    suites: list[SuiteRecord]
    contestants: list[ContestantRecord]
    prices: dict[str, dict[str, Any] | None]  # provider/model -> list price (None: unpriced)
    runs_per_task: int
    planned: int
    sandbox: str
    started_at: str
    finished_at: str | None = None
    status: str = "running"
    sessions: list[Session] = Field(default_factory=list)
    # The registered claims this bench was run for (`--claim ID`); the claims engine refuses the
    # bench as evidence for any other claim, and for these if it started before their registration.
    claims: list[str] = Field(default_factory=list)

    def identity(self) -> dict[str, Any]:
        """What a resume must match."""
        return {
            "suites": [(s.name, s.tasks, s.sha256) for s in self.suites],
            "contestants": [(c.name, c.kind, c.policy_sha256, c.script) for c in self.contestants],
            "runs_per_task": self.runs_per_task,
            "claims": sorted(self.claims),
        }


# --- the record of `ssw bench validate --out FILE` (bench/validation_record.py) ---


class VerdictRecord(VerdictFields):
    summary: str
    duration_s: float


class CheckRecord(Ours):
    check: str
    ok: bool
    found: str
    warning: bool = False


class TaskEntry(Ours):
    task: str  # suite/id
    suite: str
    id: str
    sha256: str  # the task folder's, as util/hashing.py hashes one
    valid: bool
    problem: str | None
    checks: list[CheckRecord]
    not_run: list[str]
    start: VerdictRecord | None
    reference: list[VerdictRecord]
    duration_s: float


class Totals(Ours):
    tasks: int
    valid: int
    invalid: int


class ValidationRecord(Ours):
    """What a claim reads is required; the provenance around it has defaults, so a record made
    by hand in a test (kind, start, commit, totals, tasks) still reads."""

    schema_version: Literal[1] = 1
    kind: Literal["ssw bench validate"]
    tool: dict[str, str] = Field(default_factory=dict)  # name, version
    command: list[str] = Field(default_factory=list)
    commit: str | None
    dirty: bool | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    jobs: int = 1
    sandbox: str | None = None  # what confined the test runs ("none" too); None: not recorded
    started_at: str
    finished_at: str | None = None
    duration_s: float = 0.0
    checks: dict[str, str] = Field(default_factory=dict)  # the checks, in order, and what holds
    suites: list[dict[str, Any]] = Field(default_factory=list)  # name, path, tasks (ids)
    totals: Totals
    tasks: list[TaskEntry]
