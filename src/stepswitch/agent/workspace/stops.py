"""SIGINT and SIGTERM during a run. Until the run's end begins, each does what its caller's
handler says (Ctrl-C, and SIGTERM under `sigterm_interrupts`, raise an interruption the run
records); the first that stops the run, or the run ending of itself, begins the end, and from
then on no signal interrupts it: saving the work, writing the record, cleaning up. A signal held
so is said at once, on stderr, and given to the caller's handler when the end is done, unless
the run was already stopping (docs/decisions/0023-every-end-keeps-the-work.md)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from stepswitch.errors import Interrupted

STOPS: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)
Handler = Callable[[int, FrameType | None], object] | int | None


def signal_label(signum: int) -> str:
    """What the user knows the signal as: "Ctrl-C" for SIGINT, else its name."""
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


class Ending:
    """One run's handler for SIGINT and SIGTERM; `begin()` where the run's end starts."""

    def __init__(self, saying: str) -> None:
        self.saying = saying  # what ssw finishes first, for the line a held signal prints
        self.ending = False
        self.stopped_by: int | None = None  # the signal that stopped the run
        self.pending: int | None = None  # for the caller's handler, once the end is done
        self.previous: dict[int, Handler] = {}

    def begin(self) -> None:
        self.ending = True

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.ending:
            if self.stopped_by is None and self.pending is None:
                self.pending = signum
            line = f"ssw: {signal_label(signum)}: {self.saying} first; it stops when that is done"
            # os.write, not print: a handler that prints can land inside a print of the run's.
            with contextlib.suppress(OSError):
                os.write(2, (line + "\n").encode())
            return
        self.ending, self.stopped_by = True, signum  # set before anything raises
        previous = self.previous[signum]
        if callable(previous):
            previous(signum, frame)  # raises: the run stops
            self.ending, self.stopped_by = False, None  # a handler that lets the run go on
            return
        # SIG_DFL would end the process here, the work unsaved: the run stops instead, and
        # the default action comes once its end is done.
        self.pending = signum
        raise Interrupted(signal_label(signum))


@contextmanager
def run_ending(saying: str) -> Iterator[Ending]:
    """Hold SIGINT and SIGTERM from the run's end on (in the main thread; elsewhere signals
    stay as they are). A signal the caller ignores stays ignored."""
    ending = Ending(saying)
    if threading.current_thread() is not threading.main_thread():
        yield ending
        return
    for signum in STOPS:
        previous = signal.getsignal(signum)
        if previous in (signal.SIG_IGN, None):
            continue  # ignored (a bench worker's SIGINT) or set outside Python: left alone
        ending.previous[signum] = previous
        signal.signal(signum, ending.on_signal)
    try:
        yield ending
    finally:
        for signum, previous in ending.previous.items():
            signal.signal(signum, previous)
    if ending.pending is not None:  # the end is done: now the caller's handler has it
        signal.raise_signal(ending.pending)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM stops a run (or a bench) as Ctrl-C does: an interruption it records, its work
    committed. In the main thread, as `run_ending`; elsewhere SIGTERM stays as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(signal_label(signum))

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
