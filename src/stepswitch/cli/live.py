"""What `ssw run` shows while a step is under way. On a terminal, one line at the bottom that
says what runs now (the step, its model, the tool call it is in, the gates), for how long, and
the dollars spent so far against the budget, redrawn each second, with every other line printed
above it. Elsewhere (a pipe, a log file), the tool calls and the gates' start as plain lines,
since a redrawn line would only be noise there."""

from __future__ import annotations

import contextlib
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from stepswitch.agent.events import Event, Progress, RunUpdate, Sink
from stepswitch.records.money import CostRange
from stepswitch.records.steps import GateVerdicts, ModelStep, ReviewVerdicts
from stepswitch.util.text import escape_controls

CLEAR = "\r\x1b[K"  # to the line's start, erase to its end
TICK_S = 1.0


def _one_line(text: str, width: int) -> str:
    flat = escape_controls(text, keep_newlines=False)
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


class PlainProgress:
    """A sink for a stream that is no terminal: tool calls and the gates' start, one line each."""

    def __init__(self, print_line: Callable[[str], None]) -> None:
        self.print_line = print_line

    def on_event(self, event: Event) -> None:
        if isinstance(event, Progress) and event.what in ("tool", "gates"):
            self.print_line(f"      > {_one_line(event.text, 120)}")


class LiveLine:
    """A sink, and the `print_line` of a run on a terminal: the status line stays last."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self._lock = threading.Lock()
        self._step = ""  # the step under way, "" between steps
        self._doing = ""  # what the step is in: a tool call, the gates
        self._since = 0.0
        self._spent = CostRange()  # the run's steps' dollars so far
        self._budget: float | None = None  # the run's budget in dollars, None: none
        self._shown = False
        self._stop = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="ssw-live-line", daemon=True)
        self._ticker.start()

    def print_line(self, line: str) -> None:
        with self._lock:
            self._clear()
            self.stream.write(line + "\n")
            self._draw()

    def on_event(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, Progress):
                if event.what in ("step", "gates"):
                    self._step, self._doing, self._since = event.text, "", self.clock()
                else:
                    self._doing = event.text
            elif isinstance(event, ModelStep | GateVerdicts | ReviewVerdicts | RunUpdate):
                self._step = self._doing = ""  # its own line follows, printed above
            if isinstance(event, ModelStep) and event.cost is not None:
                self._spent += event.cost
            elif isinstance(event, RunUpdate) and not event.final:
                self._budget = run_budget(event.run.policy)
            self._clear()
            self._draw()

    def status(self) -> str:
        """The status line as it is now ("" when nothing is under way)."""
        if not self._step:
            return ""
        elapsed = self.clock() - self._since
        text = f"  … {self._step} {elapsed:.0f} s · {self.dollars()}"
        return text + (f" · {self._doing}" if self._doing else "")

    def dollars(self) -> str:
        """`$0.0123 of $2.00`: spent so far (a range where usage was lost), and the budget."""
        if self._budget is None:
            return f"{self._spent} spent"
        return f"{self._spent} of ${self._budget:.2f}"

    def close(self) -> None:
        self._stop.set()
        self._ticker.join()
        with self._lock:
            self._clear()
            self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                if self._step:
                    self._clear()
                    self._draw()

    def _clear(self) -> None:
        if self._shown:
            self.stream.write(CLEAR)
            self._shown = False

    def _draw(self) -> None:
        text = self.status()
        if text:
            width = shutil.get_terminal_size().columns - 1
            self.stream.write(_one_line(text, width))
            self._shown = True
        self.stream.flush()


def run_budget(policy: dict[str, object]) -> float | None:
    """The budget in the run record's policy (its limits in force), None when it has none."""
    limits = policy.get("limits")
    budget = limits.get("budget_usd") if isinstance(limits, dict) else None
    return float(budget) if isinstance(budget, int | float) else None


@contextlib.contextmanager
def progress_output(as_json: bool) -> Iterator[tuple[Callable[[str], None], tuple[Sink, ...]]]:
    """The `print_line` and the progress sink of a run started from the command line. With
    --json, stdout carries only the run record: progress goes to stderr."""
    stream = sys.stderr if as_json else sys.stdout
    if stream.isatty():
        live = LiveLine(stream)
        try:
            yield live.print_line, (live,)
        finally:
            live.close()
        return

    def print_line(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    yield print_line, (PlainProgress(print_line),)
