"""What a run tells the world as it goes: typed events to a list of sinks. The record folder
writer is one sink, the terminal printer another; nothing in the agent prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast

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
    gates ("gates"); or the verdict of a pre-flight beside the first call came (PREFLIGHT).
    For a live display, and for the trace's times (agent/otel.py reads its kind, never its
    text): no record holds it, its end is the record that follows (the step, the gates'
    verdicts)."""

    what: str
    text: str


# The Progress of a pre-flight run beside the first call whose verdict came in (ADR 0088).
PREFLIGHT = "preflight"

Event = StepEvent | Notice | RunUpdate | Progress


class Sink(Protocol):
    def on_event(self, event: Event) -> None: ...


class Rungs(Protocol):
    """What holds the escalation level: the run's ladder (agent/ladder.py)."""

    @property
    def level(self) -> int: ...


_E = TypeVar("_E", bound=Event)


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
    """Stamps each step event with the run's id, its number in the order events happen and the
    ladder's level (`follow`), hands every event to every sink, and keeps the step events the
    record writer took (`recorded`), which the run's totals are made of."""

    def __init__(self, run_id: str, sinks: Sequence[Sink]) -> None:
        self.run_id = run_id
        self.sinks = tuple(sinks)
        self.recorded: list[StepEvent] = []
        self._seq = 0
        self._rungs: Rungs | None = None  # None: level 0 (no ladder yet)

    def follow(self, rungs: Rungs) -> None:
        """Stamp step events with `rungs.level` from now on (the session's ladder)."""
        self._rungs = rungs

    def emit(self, event: _E) -> _E:
        """Hand `event` to the sinks; a step event as stamped, which is what is returned."""
        if isinstance(event, Notice | RunUpdate | Progress):
            for sink in self.sinks:
                sink.on_event(event)
            return event
        self._seq += 1
        level = self._rungs.level if self._rungs is not None else 0
        step = event.model_copy(
            update={"run_id": self.run_id, "seq": self._seq, "escalation": level}
        )
        counted = False
        for sink in self.sinks:
            sink.on_event(step)
            if not counted and isinstance(sink, RecordWriter):
                self.recorded.append(step)  # in steps.jsonl now: counted, whatever sinks follow
                counted = True
        if not counted:
            self.recorded.append(step)  # no record writer (a library caller's own sinks)
        return cast(_E, step)  # a copy of `event`: its own type

    def notice(self, text: str) -> None:
        self.emit(Notice(text))

    def progress(self, what: str, text: str) -> None:
        self.emit(Progress(what, text))
