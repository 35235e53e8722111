"""`ssw bench validate SUITE...`: check that every task's hidden tests tell its untouched start
from its reference. Exit 0 when every task is valid, 1 when any is not, 2 for a malformed task."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

import typer

from stepswitch.errors import UsageError

bench_app = typer.Typer(help="Benchmark task suites.", no_args_is_help=True)


def render_validation(result: object) -> str:
    from stepswitch.bench.validate import TaskValidation

    assert isinstance(result, TaskValidation)
    if result.problem is not None:
        return f"INVALID  {result.task}: {result.problem}"
    start = result.start.summary() if result.start else "-"
    runs = {r.summary() for r in result.reference}
    reference = f"{runs.pop()} x{len(result.reference)}" if len(runs) == 1 else "; ".join(runs)
    return f"valid    {result.task}  (start: {start}; reference: {reference})"


@bench_app.command("validate")
def validate(
    suites: Annotated[
        list[Path],
        typer.Argument(help="Suite folders, e.g. bench/suites/general, or task folders."),
    ],
    jobs: Annotated[
        int | None, typer.Option(min=1, help="Tasks validated at once (default: the CPU count).")
    ] = None,
) -> None:
    """For every task: the untouched start fails its hidden tests, the reference passes them twice,
    both pass their visible tests, and nothing passes its time limits."""
    from stepswitch.bench.task import load_suite
    from stepswitch.bench.validate import validate_tasks

    tasks = [task for folder in suites for task in load_suite(folder)]  # ConfigError: exit 2
    names = [t.name for t in tasks]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"tasks given twice: {', '.join(twice)}")
    began = time.monotonic()
    invalid = 0
    for result in validate_tasks(tasks, jobs=jobs or os.cpu_count() or 1):
        invalid += not result.valid
        typer.echo(render_validation(result))
    typer.echo(
        f"{len(tasks)} tasks: {len(tasks) - invalid} valid, {invalid} invalid "
        f"({time.monotonic() - began:.1f} s)"
    )
    if invalid:
        raise typer.Exit(1)
