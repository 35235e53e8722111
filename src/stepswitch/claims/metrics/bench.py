"""Bench evidence: `ssw bench validate` records and bench folders (bench/runs/<id>/), read through
the bench's own models (bench/files/), never its printed lines:

- the validation record (`ssw bench validate --out FILE`, `ValidationRecord`): when it started,
  on which commit, and per task its folder's sha256, its checks and its verdict. The lines the
  command prints say neither when nor on what they ran: a claim cannot use them;
- `<run>/run.json`: `started_at` (the first session's start), `commit` (the code it ran),
  `claims` (the ids `ssw bench run --claim ID` tied it to; absent: none) and `contestants`
  (each one's kind, policy and script: whether it called a model);
- `<run>/results.csv`: one `ResultsCsvRow` per task run.

Each contestant's runs are noted as evidence of a model, a script or a built-in (`evidence_kind`,
from run.json, never guessed): what a claim on them may say (claims/scope.py). A paired claim
needs `MIN_PAIRED_TASKS` tasks both contestants ran and shows its interval's width
(docs/decisions/0027-what-evidence-can-say.md).

A file that is not what the bench writes is an EvidenceError that names the file and the field,
never a silent zero. The dollars ratio and its interval are the bench summary's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from stepswitch.bench.files import (
    RESULTS_FILE,
    RUN_FILE,
    BenchFileError,
    ContestantRecord,
    ResultRow,
    TaskEntry,
    ValidationRecord,
    first_problem,
    parse_json,
    parse_results,
)
from stepswitch.claims.inputs import EvidenceError, Inputs, RunSeen, Unprovable, field_of
from stepswitch.claims.metrics.base import Computed, Metric, note_contestants
from stepswitch.claims.numbers import INT, TEXT, fixed, pct
from stepswitch.claims.scope import EvidenceKind

if TYPE_CHECKING:
    from stepswitch.bench.task import Task

MIN_PAIRED_TASKS = 30  # ADR 0027: one task can move a paired interval; thirty cannot alone


def _suites(inputs: Inputs) -> dict[str, dict[str, Task]]:
    from stepswitch.bench.task import load_suite

    suites: dict[str, dict[str, Task]] = {}
    for rel in inputs.paths("suites"):
        folder = inputs.folder(rel)
        suites[folder.name] = {task.name: task for task in load_suite(folder)}
    return suites


def _record(inputs: Inputs, rel: str) -> ValidationRecord:
    text = inputs.text(rel)
    if not text.lstrip().startswith("{"):
        why = "the lines ssw bench validate prints say neither when nor on which commit they ran"
        inputs.undated_input(rel, f"{why}; use the record of ssw bench validate --out FILE")
        raise Unprovable(f"{rel} is not the record of ssw bench validate --out FILE: {why}")
    try:
        return parse_json(ValidationRecord, text, rel)
    except BenchFileError as exc:
        raise EvidenceError(str(exc)) from None


def _record_entries(inputs: Inputs, rel: str) -> dict[str, TaskEntry]:
    """The record's tasks by name, after checking it against itself: each verdict is what its
    checks give, and the totals count the tasks."""
    from stepswitch.bench.validation_result import CHECKS

    record = _record(inputs, rel)
    inputs.run(RunSeen(rel, record.started_at, record.commit or "", ()))
    committed_tree(inputs, rel, "dirty", record.dirty)
    if record.commit:
        inputs.made_at(rel, record.commit, record.started_at)
    entries: dict[str, TaskEntry] = {}
    for entry in record.tasks:
        if entry.task in entries:
            raise Unprovable(f"{rel}: {entry.task} is validated twice")
        ok = {c.check: c.ok for c in entry.checks}
        every = all(ok.get(check, False) for check in CHECKS)
        if entry.valid is not every or (entry.valid and entry.problem is not None):
            raise Unprovable(
                f"{rel}: {entry.task} is marked valid={entry.valid}, but its checks give {every}"
            )
        entries[entry.task] = entry
    valid = sum(e.valid for e in entries.values())
    t = record.totals
    if (t.tasks, t.valid, t.invalid) != (len(entries), valid, len(entries) - valid):
        raise Unprovable(
            f"{rel}: its totals {(t.tasks, t.valid, t.invalid)} do not count its tasks"
        )
    return entries


def validation(inputs: Inputs) -> Computed:
    """Every task of the suites against the validation: valid only when the record has it, all
    its checks held, and its folder is byte for byte the one validated (by sha256)."""
    from stepswitch.bench.validation_record import task_sha256s

    entries = _record_entries(inputs, inputs.one("transcript"))
    suites = _suites(inputs)
    verdicts: dict[str, str] = {}  # task -> valid | invalid | not_validated | changed
    for tasks in suites.values():
        hashes = task_sha256s(list(tasks.values()))
        for name, sha256 in zip(tasks, hashes, strict=True):
            entry = entries.get(name)
            if entry is None:
                verdicts[name] = "not_validated"
            elif entry.sha256 != sha256:
                verdicts[name] = "changed"  # the task changed since it was validated
            else:
                verdicts[name] = "valid" if entry.valid else "invalid"
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


def committed_tree(inputs: Inputs, rel: str, key: str, dirty: object) -> None:
    """Evidence comes from a committed tree (ADR 0028): a record whose `dirty` (its field `key`)
    is not false (the tree had uncommitted changes, or the record cannot say) proves nothing."""
    if dirty is not False:
        why = "had uncommitted changes" if dirty is True else f"is not known ({key}: {dirty!r})"
        where = inputs.where(rel, f'"{key}"')
        raise Unprovable(
            f"{rel}: the tree it was made from {why} ({where}): commit, then make it again"
        )


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
    commit = str(run.get("commit") or "")
    inputs.run(RunSeen(rel, str(started), commit, tuple(map(str, claims))))
    committed_tree(inputs, f"{base}/{RUN_FILE}", "dirty", run.get("dirty"))
    if commit:  # ssw's own commit (a task's scratch repository's is each task run's base_commit)
        inputs.made_at(f"{base}/{RUN_FILE}", commit, str(started))
    return run


def _contestants(run: Any, rel: str) -> dict[str, ContestantRecord]:
    """run.json's contestants by name (none recorded: empty)."""
    try:
        records = [ContestantRecord.model_validate(c) for c in run.get("contestants") or []]
    except ValidationError as exc:
        raise EvidenceError(f"{rel}: contestants.{first_problem(exc)}") from None
    return {c.name: c for c in records}


def evidence_kind(row: ResultRow, record: ContestantRecord | None, rel: str) -> EvidenceKind:
    """What a contestant's runs are evidence of: a model, a script, or a built-in (oracle,
    null). A policy run.json does not record is unknown, never taken for a model."""
    from stepswitch.registry.presets import SCRIPTED_PROVIDER, SIM_PROVIDER

    name, kind = row.contestant, row.contestant_kind
    if record is not None and record.kind != kind:
        raise Unprovable(f"{rel}: {name} is {record.kind} in {RUN_FILE} but {kind} in its results")
    if kind == "oracle":
        return "oracle"
    if kind == "null":
        return "null"
    if record is None:
        raise Unprovable(
            f"{rel}/{RUN_FILE} records no contestant {name}: whether its runs called a model or "
            "replayed a script is unknown"
        )
    workers = record.policy.get("workers")
    if not isinstance(workers, dict) or not workers:
        raise Unprovable(f"{rel}/{RUN_FILE}: {name}'s policy records no workers")
    providers = {w.get("provider") if isinstance(w, dict) else None for w in workers.values()}
    if record.script is not None or SCRIPTED_PROVIDER in providers:
        # One scripted worker is enough: its replies are in every figure (stricter than sim).
        return "scripted"
    if SIM_PROVIDER in providers:
        return "simulated"
    if None in providers:
        raise Unprovable(f"{rel}/{RUN_FILE}: a worker of {name} records no provider")
    return "model"


def bench_rows(inputs: Inputs, rel: str) -> tuple[list[ResultRow], dict[str, ContestantRecord]]:
    """The rows of a bench folder's results.csv and its run.json's contestants; the bench itself
    is noted for registration."""
    folder = inputs.folder(rel)
    base = rel.rstrip("/")
    run = bench_seen(inputs, rel)
    if not (folder / RESULTS_FILE).is_file():
        raise EvidenceError(f"{rel} has no {RESULTS_FILE}")
    try:
        rows = parse_results(inputs.text(f"{base}/{RESULTS_FILE}"), f"{base}/{RESULTS_FILE}")
    except BenchFileError as exc:
        raise EvidenceError(str(exc)) from None
    return rows, _contestants(run, f"{base}/{RUN_FILE}")


def _rows(inputs: Inputs, metric: Metric, keep: Callable[[ResultRow], bool]) -> list[ResultRow]:
    """Every bench's rows that `keep` keeps; whose runs they are, and of which kind, noted for
    the claim's words (claims/scope.py)."""
    rows: list[ResultRow] = []
    kinds: dict[str, EvidenceKind] = {}
    for rel in inputs.paths("run"):
        mine, records = bench_rows(inputs, rel)
        mine = [r for r in mine if keep(r)]
        for r in mine:
            kind = evidence_kind(r, records.get(r.contestant), rel)
            who = f"contestant {r.contestant}"
            if kinds.setdefault(who, kind) != kind:
                raise Unprovable(f"{who} is {kinds[who]} in one bench and {kind} in {rel}")
        rows += mine
    note_contestants(inputs, metric, kinds)
    return rows


def oracle_null(inputs: Inputs) -> Computed:
    """The harness's own check: the reference change must end `done` through the agent's own
    gates AND pass the hidden tests on every task (an oracle that ends `gates_failed` is a
    harness failure even when the hidden tests pass); no change must pass none."""
    rows = _rows(inputs, ORACLE_NULL, lambda r: r.contestant_kind in BUILTINS)
    suites = _suites(inputs)
    tasks = sorted({name for suite in suites.values() for name in suite})

    def runs(kind: str, task: str) -> list[ResultRow]:
        return [c for c in rows if c.contestant_kind == kind and c.task == task]

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
                not runs("oracle", t) or any(c.outcome != "done" for c in runs("oracle", t))
                for t in tasks
            ),
            "null_passed": sum(
                not runs("null", t) or any(c.passed for c in runs("null", t)) for t in tasks
            ),
            "harness_errors": sum(c.harness_error for c in rows),
        }
    )


def paired_dollars(inputs: Inputs) -> Computed:
    """treatment's dollars per task run over control's on the tasks both ran, with the bench
    summary's 95% cluster-bootstrap interval and its width, on at least MIN_PAIRED_TASKS tasks
    (ADR 0027: with one task every resample is that task, and the interval is the point). A
    task run with unpriced steps is not left out (a published average of only the priced cells
    went wrong that way): the claim cannot be proved."""
    from stepswitch.bench.summary import compare

    treatment, control = inputs.params["treatment"], inputs.params["control"]
    mine = _rows(inputs, PAIRED_DOLLARS, lambda r: r.contestant in (treatment, control))
    for side in (treatment, control):
        if not any(c.contestant == side for c in mine):
            raise Unprovable(f"no task run of contestant {side!r} in the bench")
    unpriced = [c for c in mine if c.unpriced_steps]
    if unpriced:
        raise Unprovable(
            f"{len(unpriced)} task runs have unpriced steps (first: {unpriced[0].contestant} on "
            f"{unpriced[0].task}): price every model (ssw prices refresh PROVIDER) and run them "
            "again; a ratio of the priced ones only would mislead"
        )
    result = compare(treatment, control, mine)
    tasks = int(result["tasks"])  # the bootstrap's clusters: five attempts on a task are one
    if tasks < MIN_PAIRED_TASKS:
        raise Unprovable(
            f"only {tasks} task(s) were run by both {treatment} and {control}: a paired claim "
            f"needs at least {MIN_PAIRED_TASKS}, or its interval is a few jumps of one task "
            "(docs/decisions/0027-what-evidence-can-say.md)"
        )
    low_bounds, high_bounds = result["dollars_ratio"], result["dollars_ratio_high_bounds"]
    if low_bounds["point"] is None or low_bounds["high"] is None or high_bounds["high"] is None:
        raise Unprovable(f"{control} spent $0 on the tasks both ran: a dollars ratio is undefined")

    def rate(side: str) -> float:
        runs = [c for c in mine if c.contestant == side]
        return sum(c.passed for c in runs) / len(runs)

    # With lost usage the high bounds' ratio can be the larger: the claim takes the worse.
    high = max(float(low_bounds["high"]), float(high_bounds["high"]))
    # Treatment's pass rate less control's, in percentage points, with the same bootstrap.
    diff = result["pass_rate_difference"]
    points = {k: 100 * float(diff[k]) for k in ("point", "low", "high")}
    return Computed(
        {
            "tasks": tasks,
            "treatment": treatment,
            "control": control,
            "dollars_ratio": float(low_bounds["point"]),
            "ratio_ci_low": float(low_bounds["low"]),
            "ratio_ci_high": high,
            "ratio_ci_width": high - float(low_bounds["low"]),
            "treatment_pass_rate": rate(treatment),
            "control_pass_rate": rate(control),
            "pass_difference_points": points["point"],
            "pass_difference_ci_low": points["low"],
            "pass_difference_ci_high": points["high"],
            "harness_errors": sum(c.harness_error for c in mine),
        }
    )


RATIO = fixed(3)
BUILTINS = ("oracle", "null")

VALIDATION = Metric(
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
)
ORACLE_NULL = Metric(
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
    evidence=frozenset({"oracle", "null"}),
)
PAIRED_DOLLARS = Metric(
    "bench.paired_dollars",
    ("run",),
    {
        "tasks": INT,
        "treatment": TEXT,
        "control": TEXT,
        "dollars_ratio": RATIO,
        "ratio_ci_low": RATIO,
        "ratio_ci_high": RATIO,
        "ratio_ci_width": RATIO,
        "treatment_pass_rate": pct(1),
        "control_pass_rate": pct(1),
        "pass_difference_points": fixed(1),
        "pass_difference_ci_low": fixed(1),
        "pass_difference_ci_high": fixed(1),
        "harness_errors": INT,
    },
    paired_dollars,
    "dollars per task run of one contestant over another's, with the bench's interval and its "
    "width, and the difference of their pass rates in points with its interval, on at least "
    f"{MIN_PAIRED_TASKS} tasks both ran",
    params=("treatment", "control"),
    evidence=frozenset({"model", "scripted", "simulated"}),
    shows=("ratio_ci_width",),  # a zero or near-zero width is seen, not inferred
)
METRICS = (VALIDATION, ORACLE_NULL, PAIRED_DOLLARS)

__all__ = [
    "METRICS",
    "MIN_PAIRED_TASKS",
    "RESULTS_FILE",
    "RUN_FILE",
    "bench_rows",
    "bench_seen",
    "evidence_kind",
]
