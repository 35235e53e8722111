"""Bench evidence: `ssw bench validate` records and bench folders (bench/runs/<id>/), as
`stepswitch.bench` writes them (validate.py, runner.py, record.py, results.py):

- the validation record (`ssw bench validate --out FILE`, JSON): `started_at`, `commit`, the
  tool's version, and per task `task` (suite/id), `sha256` (its folder, as claims/inputs.py
  hashes one), `valid`, `problem`, `checks` (`check`, `ok`) and `not_run`; `totals`. Its printed
  lines (`valid    suite/id ...`, `INVALID  suite/id: ...`, `N tasks: V valid, I invalid`) are
  read too, but say neither when nor on what they ran: a claim cannot use them;
- `<run>/run.json`: `started_at` (the first session's start), `commit` (the code it ran), and
  `claims` (the ids `ssw bench run --claim ID` tied it to; absent: none);
- `<run>/results.csv`: one row per task run; read here: `task`, `suite`, `contestant`,
  `contestant_kind` (oracle | null | policy), `attempt`, `passed`, `outcome` (harness_error for
  the harness's own failures), `dollars_low`, `dollars_high`, `unpriced_steps`.

A file without them is an EvidenceError that names the file and the missing column, never a
silent zero. The dollars ratio and its interval are the bench summary's own (`bench.summary`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stepswitch.claims.inputs import EvidenceError, Inputs, RunSeen, Unprovable, field_of
from stepswitch.claims.metrics.base import Computed, Metric
from stepswitch.claims.numbers import INT, TEXT, fixed, pct

if TYPE_CHECKING:
    from stepswitch.bench.task import Task

RUN_FILE = "run.json"
KINDS = ("oracle", "null", "policy")
RESULTS_FILE = "results.csv"
COLUMNS = (
    "task",
    "suite",
    "contestant",
    "contestant_kind",
    "attempt",
    "passed",
    "outcome",
    "dollars_low",
    "dollars_high",
    "unpriced_steps",
)

VALIDATE_KIND = "ssw bench validate"
_VALID = re.compile(r"^valid\s+(\S+)\s")
_INVALID = re.compile(r"^INVALID\s+(\S+?):\s")
_TOTAL = re.compile(r"^(\d+) tasks: (\d+) valid, (\d+) invalid\b")


def _suite_tasks(inputs: Inputs) -> dict[str, list[str]]:
    """suite name -> its task names (suite/id), for every folder in evidence.suites."""
    return {suite: sorted(tasks) for suite, tasks in _suites(inputs).items()}


def _suites(inputs: Inputs) -> dict[str, dict[str, Task]]:
    from stepswitch.bench.task import load_suite

    suites: dict[str, dict[str, Task]] = {}
    for rel in inputs.paths("suites"):
        folder = inputs.folder(rel)
        suites[folder.name] = {task.name: task for task in load_suite(folder)}
    return suites


def _transcript_lines(inputs: Inputs, rel: str, text: str) -> tuple[set[str], set[str]]:
    """The lines `ssw bench validate` prints: valid and invalid task names. They carry no date
    and no commit, so the claim is refused (registration) whatever they say."""
    valid, invalid, total = set(), set(), None
    for line in text.splitlines():
        if m := _VALID.match(line):
            valid.add(m.group(1))
        elif m := _INVALID.match(line):
            invalid.add(m.group(1))
        elif m := _TOTAL.match(line):
            total = tuple(int(g) for g in m.groups())
    if total is None:
        raise EvidenceError(
            f"{rel} has no 'N tasks: V valid, I invalid' line from ssw bench validate"
        )
    if total != (len(valid) + len(invalid), len(valid), len(invalid)):
        raise Unprovable(f"{rel}: its total line {total} does not count its task lines")
    inputs.undated_input(
        rel,
        "printed lines of ssw bench validate say neither when nor on which commit they ran; "
        "use the record of ssw bench validate --out FILE",
    )
    return valid, invalid


def _record_entries(inputs: Inputs, rel: str, record: Any) -> dict[str, dict[str, Any]]:
    """The record's tasks by name, after checking it against itself: each verdict is what its
    checks give, and the totals count the tasks."""
    from stepswitch.bench.validate import CHECKS

    if not isinstance(record, dict) or record.get("kind") != VALIDATE_KIND:
        raise EvidenceError(f"{rel} is not a record of ssw bench validate (kind: {VALIDATE_KIND})")
    started = field_of(record, rel, "started_at")
    inputs.run(RunSeen(rel, str(started), str(record.get("commit") or ""), ()))
    entries: dict[str, dict[str, Any]] = {}
    tasks = field_of(record, rel, "tasks")
    if not isinstance(tasks, list):
        raise EvidenceError(f"{rel}: tasks is not a list")
    for i, entry in enumerate(tasks):
        for key in ("task", "sha256", "valid", "checks"):
            if not isinstance(entry, dict) or key not in entry:
                raise EvidenceError(f"{rel}: tasks[{i}] has no {key}")
        name = str(entry["task"])
        if name in entries:
            raise Unprovable(f"{rel}: {name} is validated twice")
        ok = {str(c.get("check")): c.get("ok") is True for c in entry["checks"]}
        every = all(ok.get(check, False) for check in CHECKS)
        if entry["valid"] is not every or (entry["valid"] and entry.get("problem") is not None):
            raise Unprovable(
                f"{rel}: {name} is marked valid={entry['valid']}, but its checks give {every}"
            )
        entries[name] = entry
    valid = sum(e["valid"] is True for e in entries.values())
    totals = field_of(record, rel, "totals")
    stored = (totals.get("tasks"), totals.get("valid"), totals.get("invalid"))
    if stored != (len(entries), valid, len(entries) - valid):
        raise Unprovable(f"{rel}: its totals {stored} do not count its tasks")
    return entries


def validation(inputs: Inputs) -> Computed:
    """Every task of the suites against the validation: valid only when the record has it, all
    its checks held, and its folder is byte for byte the one validated (by sha256)."""
    from stepswitch.bench.validate import task_sha256

    rel = inputs.one("transcript")
    text = inputs.text(rel)
    suites = _suites(inputs)
    verdicts: dict[str, str] = {}  # task -> valid | invalid | not_validated | changed
    if text.lstrip().startswith("{"):
        entries = _record_entries(inputs, rel, inputs.json(rel))
        for tasks in suites.values():
            for name, task in tasks.items():
                entry = entries.get(name)
                if entry is None:
                    verdicts[name] = "not_validated"
                elif entry["sha256"] != task_sha256(task):
                    verdicts[name] = "changed"  # the task changed since it was validated
                else:
                    verdicts[name] = "valid" if entry["valid"] else "invalid"
    else:
        valid, invalid = _transcript_lines(inputs, rel, text)
        for tasks in suites.values():
            for name in tasks:
                found = "valid" if name in valid else "invalid" if name in invalid else None
                verdicts[name] = found or "not_validated"
    details = {}  # per suite: how many are valid, and which are not and why
    for suite, tasks in sorted(suites.items()):
        shown: dict[str, object] = {"valid": sum(verdicts[n] == "valid" for n in tasks)}
        for verdict in ("invalid", "not_validated", "changed"):
            shown[verdict] = sorted(n for n in tasks if verdicts[n] == verdict)
        details[suite] = shown
    return Computed(
        {
            "suites": len(suites),
            "per_suite": ", ".join(f"{s} {len(tasks)}" for s, tasks in sorted(suites.items())),
            "tasks": len(verdicts),
            "valid": sum(v == "valid" for v in verdicts.values()),
            "invalid": sum(v == "invalid" for v in verdicts.values()),
            # A task changed since its validation was not validated as it is now.
            "not_validated": sum(v in ("not_validated", "changed") for v in verdicts.values()),
        },
        details,
    )


@dataclass(frozen=True)
class Cell:
    """One task run, as results.csv has it."""

    task: str
    suite: str
    contestant: str
    kind: str
    attempt: int
    passed: bool
    outcome: str
    low: float
    high: float
    unpriced_steps: int


def _number(row: dict[str, str], rel: str, line: int, key: str) -> float:
    try:
        return float(row[key])
    except ValueError:
        raise EvidenceError(f"{rel}:{line}: {key} is not a number: {row[key]!r}") from None


def bench_seen(inputs: Inputs, rel: str) -> Any:
    """A bench folder's run.json, its start, commit and claims noted for registration: a bench
    tied to other claims (`ssw bench run --claim ID`), or started before the claim's
    registration, is refused for the claim."""
    base = rel.rstrip("/")
    run: Any = inputs.json(f"{base}/{RUN_FILE}")
    started = field_of(run, f"{base}/{RUN_FILE}", "started_at")
    claims = run.get("claims") or []
    if not isinstance(claims, list):
        raise EvidenceError(f"{base}/{RUN_FILE}: claims is not a list of claim ids")
    inputs.run(RunSeen(rel, str(started), str(run.get("commit") or ""), tuple(map(str, claims))))
    return run


def run_cells(inputs: Inputs, rel: str) -> list[Cell]:
    """The rows of a bench folder's results.csv; the bench itself is noted for registration."""
    folder = inputs.folder(rel)
    base = rel.rstrip("/")
    bench_seen(inputs, rel)
    if not (folder / RESULTS_FILE).is_file():
        raise EvidenceError(f"{rel} has no {RESULTS_FILE}")
    csv_rel = f"{base}/{RESULTS_FILE}"
    cells = []
    for line, row in enumerate(inputs.csv_rows(csv_rel), start=2):
        missing = [c for c in COLUMNS if c not in row]
        if missing:
            raise EvidenceError(f"{csv_rel} has no column {missing[0]}")
        if row["passed"] not in ("true", "false"):
            raise EvidenceError(f"{csv_rel}:{line}: passed is not true or false")
        if row["contestant_kind"] not in KINDS:
            raise EvidenceError(f"{csv_rel}:{line}: contestant_kind is not one of {KINDS}")
        cells.append(
            Cell(
                row["task"],
                row["suite"],
                row["contestant"],
                row["contestant_kind"],
                int(_number(row, csv_rel, line, "attempt")),
                row["passed"] == "true",
                row["outcome"],
                _number(row, csv_rel, line, "dollars_low"),
                _number(row, csv_rel, line, "dollars_high"),
                int(_number(row, csv_rel, line, "unpriced_steps")),
            )
        )
    return cells


def oracle_null(inputs: Inputs) -> Computed:
    """The harness's own check: the reference change must end `done` through the agent's own
    gates AND pass the hidden tests on every task (an oracle that ends `gates_failed` is a
    harness failure even when the hidden tests pass); no change must pass none."""
    cells = [c for rel in inputs.paths("run") for c in run_cells(inputs, rel)]
    suites = _suite_tasks(inputs)
    tasks = sorted({name for names in suites.values() for name in names})

    def runs(kind: str, task: str) -> list[Cell]:
        return [c for c in cells if c.kind == kind and c.task == task]

    def oracle_ok(task: str) -> bool:
        mine = runs("oracle", task)
        return bool(mine) and all(c.passed and c.outcome == "done" for c in mine)

    return Computed(
        {
            "suites": len(suites),
            "tasks": len(tasks),
            # A task the oracle never ran counts against the claim, never for it; so for null.
            "oracle_failed": sum(not oracle_ok(t) for t in tasks),
            "oracle_not_done": sum(
                any(c.outcome != "done" for c in runs("oracle", t)) for t in tasks
            ),
            "null_passed": sum(
                not runs("null", t) or any(c.passed for c in runs("null", t)) for t in tasks
            ),
            "harness_errors": sum(c.outcome == "harness_error" for c in cells),
        }
    )


def paired_dollars(inputs: Inputs) -> Computed:
    """treatment's dollars per task run over control's on the tasks both ran, with the bench
    summary's 95% cluster-bootstrap interval. A task run with unpriced steps is not left out (a
    published average of only the priced cells went wrong that way): the claim cannot be proved."""
    from stepswitch.bench.results import ResultRow
    from stepswitch.bench.summary import compare

    treatment, control = inputs.params["treatment"], inputs.params["control"]
    cells = [c for rel in inputs.paths("run") for c in run_cells(inputs, rel)]
    mine = [c for c in cells if c.contestant in (treatment, control)]
    for side in (treatment, control):
        if not any(c.contestant == side for c in mine):
            raise Unprovable(f"no task run of contestant {side!r} in the bench")
    unpriced = [c for c in mine if c.unpriced_steps > 0]
    if unpriced:
        raise Unprovable(
            f"{len(unpriced)} task runs have unpriced steps (e.g. {unpriced[0].contestant} on "
            f"{unpriced[0].task}): price every model (ssw prices refresh PROVIDER) and run them "
            "again; a ratio of the priced ones only would mislead"
        )
    rows = [
        ResultRow(
            task=c.task,
            suite=c.suite,
            contestant=c.contestant,
            contestant_kind=c.kind,
            attempt=c.attempt,
            passed=c.passed,
            outcome=c.outcome,
            dollars_low=c.low,
            dollars_high=c.high,
            unpriced_steps=c.unpriced_steps,
        )
        for c in mine
    ]
    result = compare(treatment, control, rows)
    low_bounds, high_bounds = result["dollars_ratio"], result["dollars_ratio_high_bounds"]
    if low_bounds["point"] is None or low_bounds["high"] is None or high_bounds["high"] is None:
        raise Unprovable(f"{control} spent $0 on the tasks both ran: a dollars ratio is undefined")

    def rate(side: str) -> float:
        runs = [c for c in mine if c.contestant == side]
        return sum(c.passed for c in runs) / len(runs)

    return Computed(
        {
            "tasks": int(result["tasks"]),
            "treatment": treatment,
            "control": control,
            "dollars_ratio": float(low_bounds["point"]),
            "ratio_ci_low": float(low_bounds["low"]),
            # With lost usage the high bounds' ratio can be the larger: the claim takes the worse.
            "ratio_ci_high": max(float(low_bounds["high"]), float(high_bounds["high"])),
            "treatment_pass_rate": rate(treatment),
            "control_pass_rate": rate(control),
            "harness_errors": sum(c.outcome == "harness_error" for c in mine),
        }
    )


RATIO = fixed(3)

METRICS = (
    Metric(
        "bench.validation",
        ("transcript", "suites"),
        {
            "suites": INT,
            "per_suite": TEXT,
            "tasks": INT,
            "valid": INT,
            "invalid": INT,
            "not_validated": INT,
        },
        validation,
        "the record of `ssw bench validate --out FILE`, against the tasks of the suites",
    ),
    Metric(
        "bench.oracle_null",
        ("run", "suites"),
        {
            "suites": INT,
            "tasks": INT,
            "oracle_failed": INT,
            "oracle_not_done": INT,
            "null_passed": INT,
            "harness_errors": INT,
        },
        oracle_null,
        "the oracle contestant ends done through its gates and passes the hidden tests on every "
        "task of the suites, and the null contestant passes none",
    ),
    Metric(
        "bench.paired_dollars",
        ("run",),
        {
            "tasks": INT,
            "treatment": TEXT,
            "control": TEXT,
            "dollars_ratio": RATIO,
            "ratio_ci_low": RATIO,
            "ratio_ci_high": RATIO,
            "treatment_pass_rate": pct(1),
            "control_pass_rate": pct(1),
            "harness_errors": INT,
        },
        paired_dollars,
        "dollars per task run of one contestant over another's, with the bench's interval",
        params=("treatment", "control"),
    ),
)
