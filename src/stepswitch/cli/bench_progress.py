"""What `ssw bench run` shows while it runs: a rich progress bar and a line per task run on
stderr (`BarProgress`), or one JSON object per line for machines (`JsonProgress`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typer

from stepswitch.util.text import escape_controls

if TYPE_CHECKING:
    from rich.progress import Progress

    from stepswitch.bench.results import ResultRow


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
