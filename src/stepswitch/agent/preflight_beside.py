"""The pre-flight beside the plan's call (docs/decisions/0088): `ssw run` on a first run of a
base commit starts the pre-flight's gates on a thread as the plan's request leaves, and the
session waits for their verdict before anything that needs it (the first reply's tools, a
second call). A refusal is kept (`refusal`) for `ssw run` to end with, as before; `stop` ends
the gates when the run ends first, so that nothing they started outlives it."""

from __future__ import annotations

from stepswitch.agent.repo_gates import RepoGates
from stepswitch.errors import SswError
from stepswitch.gates.baseline import Baseline
from stepswitch.gates.preflight import Preflight
from stepswitch.util.on_thread import OnThread
from stepswitch.util.proc import kill_live_groups

# How often `stop` kills what a pre-flight still running started, until its thread has ended.
_STOP_POLL_S = 0.05


class PreflightBeside:
    """`begun`'s gates for `gates`, run on a thread from `start`."""

    def __init__(self, gates: RepoGates, begun: Preflight) -> None:
        self._gates = gates
        self._begun = begun
        gates.beside = True
        self._thread: OnThread[Baseline] | None = None
        self.refusal: SswError | None = None  # why the pre-flight refused the run, once it did

    def start(self) -> None:
        gates, begun = self._gates, self._begun
        self._thread = OnThread(lambda: gates.settle(begun.finish()), "ssw-preflight")

    def verdict(self) -> Baseline:
        """Wait for the gates' verdict; the pre-flight's refusal raised (and kept)."""
        assert self._thread is not None, "start() first"
        try:
            return self._thread.result()
        except SswError as exc:
            self.refusal = exc
            raise

    @property
    def lines(self) -> list[str]:
        """What the run's start says of the baseline, once the verdict is in."""
        return self._gates.verdict_lines

    def stop(self) -> None:
        """The run ends: no further gate starts, and every command the pre-flight started is
        killed (process groups, util/proc.py) until its thread has ended. After its verdict,
        nothing to do."""
        if self._thread is None:
            return
        self._begun.stop.set()
        while not self._thread.ended(_STOP_POLL_S):
            kill_live_groups()
