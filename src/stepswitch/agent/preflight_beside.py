"""The pre-flight beside the plan's call (docs/decisions/0088): `ssw run` on a first run of a
base commit starts the pre-flight's gates on a thread as the plan's request leaves, and the
session waits for their verdict before anything that needs it (the first reply's tools, a
second call). A refusal is kept (`refusal`) for `ssw run` to end with, as before; `stop` ends
the gates when the run ends first, so that nothing they started outlives it."""

from __future__ import annotations

import threading

from stepswitch.agent.repo_gates import RepoGates
from stepswitch.errors import SswError
from stepswitch.gates.baseline import Baseline
from stepswitch.gates.preflight import Preflight
from stepswitch.util.proc import kill_live_groups

# How often `stop` kills what a pre-flight still running started, until its thread has ended.
_STOP_POLL_S = 0.05


class PreflightBeside:
    """`begun`'s gates for `gates`, run on a thread from `start`. The thread stays until `stop`
    (the run's end): the sandbox kills a command when the thread that started it ends (its
    parent-death signal is per thread), and the warm pytest and a background call-map trace the
    pre-flight starts serve the whole run."""

    def __init__(self, gates: RepoGates, begun: Preflight) -> None:
        self._gates = gates
        self._begun = begun
        gates.beside = True
        self._thread: threading.Thread | None = None
        self._verdict = threading.Event()  # set once the pre-flight has ended, either way
        self._end = threading.Event()  # the run has ended: the thread may go
        self._baseline: Baseline | None = None
        self._error: BaseException | None = None
        self.refusal: SswError | None = None  # why the pre-flight refused the run, once it did

    def start(self) -> None:
        self._thread = threading.Thread(target=self._work, name="ssw-preflight", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            self._baseline = self._gates.settle(self._begun.finish())
        except BaseException as exc:  # handed to `verdict`, whatever it is
            self._error = exc
        finally:
            self._verdict.set()
        self._end.wait()

    def verdict(self) -> Baseline:
        """Wait for the gates' verdict; the pre-flight's refusal raised (and kept)."""
        assert self._thread is not None, "start() first"
        self._verdict.wait()
        if isinstance(self._error, SswError):
            self.refusal = self._error
        if self._error is not None:
            raise self._error
        assert self._baseline is not None
        return self._baseline

    @property
    def lines(self) -> list[str]:
        """What the run's start says of the baseline, once the verdict is in."""
        return self._gates.verdict_lines

    def stop(self) -> None:
        """The run ends: no further gate starts, and, before the verdict, every command the
        pre-flight started is killed (process groups, util/proc.py) until its thread has ended."""
        if self._thread is None:
            return
        self._begun.stop.set()
        self._end.set()
        self._thread.join(_STOP_POLL_S)
        while self._thread.is_alive():
            if not self._verdict.is_set():
                kill_live_groups()
            self._thread.join(_STOP_POLL_S)
