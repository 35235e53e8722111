"""One piece of work on a thread of its own, started at once, its value or its exception taken
back by the caller (`OnThread.result`): for the pre-flight's interpreter starts, which wait on
a child process and so leave the GIL to what runs beside them (ADR 0084)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class OnThread(Generic[T]):
    """`work()` running on a daemon thread named `name` from the moment this is made."""

    def __init__(self, work: Callable[[], T], name: str) -> None:
        self._work = work
        self._value: list[T] = []  # its one value, once it has returned
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value.append(self._work())
        except BaseException as exc:  # handed to the caller of `result`, whatever it is
            self._error = exc

    def result(self) -> T:
        """Wait for the work to end; its value, or raise what it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value[0]
