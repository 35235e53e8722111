"""What a run tells the world as it goes: typed events to a list of sinks. The record folder
writer is one sink, the terminal printer another; nothing in the agent prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from stepswitch.records.folder import RunFolder
from stepswitch.records.run import RunRecord
from stepswitch.records.steps import StepEvent


@dataclass(frozen=True)
class Notice:
    """A line worth saying that is no record: the gates in use, recovered ledger rows, ..."""

    text: str


@dataclass(frozen=True)
class RunUpdate:
    """run.json changed: at the start, and once more when the run ends."""

    run: RunRecord
    final: bool = False


@dataclass(frozen=True)
class Progress:
    """Something began that takes a while: a model call ("step"), a tool call ("tool"), the
    gates ("gates"). For a live display only: no record holds it, its end is the record that
    follows (the step, the gates' verdicts)."""

    what: str
    text: str


Event = StepEvent | Notice | RunUpdate | Progress


class Sink(Protocol):
    def on_event(self, event: Event) -> None: ...


class RecordWriter:
    """The sink that keeps the run folder: run.json on each update, steps.jsonl appended."""

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder

    def on_event(self, event: Event) -> None:
        if isinstance(event, RunUpdate):
            self.folder.write_run(event.run)
        elif not isinstance(event, Notice | Progress):
            self.folder.append(event)


class Events:
    """Numbers step events in the order they happen and hands every event to every sink; keeps
    the step events the record writer took (`recorded`), which the run's totals are made of."""

    def __init__(self, run_id: str, sinks: Sequence[Sink]) -> None:
        self.run_id = run_id
        self.sinks = tuple(sinks)
        self.recorded: list[StepEvent] = []
        self._seq = 0

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def emit(self, event: Event) -> None:
        step = None if isinstance(event, Notice | RunUpdate | Progress) else event
        for sink in self.sinks:
            sink.on_event(event)
            if step is not None and isinstance(sink, RecordWriter):
                self.recorded.append(step)  # in steps.jsonl now: counted, whatever sinks follow
                step = None
        if step is not None:
            self.recorded.append(step)  # no record writer (a library caller's own sinks)

    def notice(self, text: str) -> None:
        self.emit(Notice(text))

    def progress(self, what: str, text: str) -> None:
        self.emit(Progress(what, text))
