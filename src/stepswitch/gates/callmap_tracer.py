"""The call map of one suite's tests gate (`gates.callmap`): recorded by tracing the full suite once
on the untouched tree, in the foreground or on a thread, and kept in the suite's state folder
when it persists, so that after an edit the tests that ran a changed line go first."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from stepswitch.gates.callmap import CALL_MAP_FILE, BackgroundTrace, CallMap, import_time_of
from stepswitch.gates.config import TestsGate
from stepswitch.gates.context import GateContext
from stepswitch.gates.durations import Durations
from stepswitch.gates.interpreter import DEFERRED_PATH, gate_environment, project_layout
from stepswitch.gates.pytest_runs import PytestRuns
from stepswitch.gates.report import gate_report
from stepswitch.gates.runner import Gate, run_gate

# The traced run that records the call map stops after this long (or the gate's own timeout);
# past it the run goes on without a map.
CALL_MAP_TIMEOUT_S = 600.0


@dataclass
class CallMapTracer:
    context: GateContext
    durations: Durations  # learnt from the traced run; they estimate how long a trace takes
    pytest_runs: PytestRuns  # the traced run's environment
    state_dir: Path
    persist: bool  # keep the map in `state_dir` for later runs
    kept: CallMap | None = None  # this suite's own map, recorded or read
    tracing: BackgroundTrace | None = None  # the call map, traced on a thread

    def call_map(self, commit: str) -> CallMap | None:
        """The call map recorded at `commit`: this suite's own, or the one kept in `state_dir`."""
        if self.kept is not None and self.kept.commit == commit:
            return self.kept
        found = CallMap.read(self.state_dir / CALL_MAP_FILE, commit)
        if found is None or not found.usable_at(self.context.root):
            return None
        self.kept = found
        return found

    def record(self, gate: TestsGate, commit: str, background: bool = False) -> str:
        """Run the full suite once on the untouched tree at `commit`, tracing which tests run
        which lines (`gates.callmap`), unless a map of `commit` is already kept. Returns the line
        the run's start shows; a suite that cannot be traced leaves no map, and says why.
        `background`: trace a copy of the commit's files on a thread instead (a large suite
        takes many times its own length to trace), the stages following the import graph until
        the map is ready; the first gate run after it says how it went."""
        if not gate.call_map:
            return "gates: call map: off (call_map = false)"
        if self.call_map(commit) is not None:
            return f"gates: call map: kept from an earlier run at {commit[:12]}"
        context = self.context
        if not background or context.tree is None:
            timeout = min(gate.timeout_s, CALL_MAP_TIMEOUT_S)
            return self._trace(gate, commit, context.root, context.gate_env, timeout, None)
        copy = Path(tempfile.mkdtemp(prefix="ssw-start-", dir=context.gate_env.get("TMPDIR")))
        context.tree.check_out(commit, copy)
        root = copy  # check_out writes the prefix's files at the top of `copy`
        env = gate_environment(root, context.env, context.interpreter, project_layout(root))
        self.tracing = BackgroundTrace(
            lambda stop: self._trace(gate, commit, root, env, gate.timeout_s, stop), copy
        )
        return (
            f"gates: call map: tracing the full suite at {commit[:12]} in the background, on a "
            "copy of its files; until it is ready the stages follow the import graph"
        )

    def wait(self, timeout_s: float) -> bool:
        """Wait for a background trace to end (at most `timeout_s`); whether none still runs."""
        return self.tracing is None or self.tracing.wait(timeout_s)

    def news(self) -> str | None:
        """How a background trace went, once it has ended (else None)."""
        return self.tracing.news() if self.tracing is not None else None

    def stop(self) -> None:
        """End a background trace, if it runs."""
        tracing, self.tracing = self.tracing, None
        if tracing is not None:
            tracing.stop()

    def estimate_s(self, tests: int) -> float:
        """How long tracing the full suite may take: five times the suite's measured length
        when earlier runs measured it (the trace costs three to six times the suite), else a
        tenth of a second per collected test."""
        known = sum(self.durations.seconds.values())
        return 5 * known if known else 0.1 * tests

    def _trace(
        self,
        gate: TestsGate,
        commit: str,
        root: Path,
        gate_env: dict[str, str],
        timeout: float,
        stop: threading.Event | None,
    ) -> str:
        """The traced full suite in `root` (the worktree, or a copy of `commit`'s files); the
        map is kept when it is made. Returns the line that says how it went."""
        context = self.context
        scratch = context.gate_env.get("TMPDIR") or None
        with tempfile.TemporaryDirectory(prefix="ssw-callmap-", dir=scratch) as folder:
            out = Path(folder) / "calls.json"
            durations = Path(folder) / "durations.json"
            spec: dict[str, object] = {
                "files": None,
                "durations": str(durations),
                "calls": {"root": str(root), "out": str(out)},
            }
            stage_env = self.pytest_runs.stage_env(spec, Path(folder), root=root)
            env = {**stage_env, DEFERRED_PATH: gate_env[DEFERRED_PATH]}
            began = time.monotonic()
            name = f"{gate.name}:call-map"
            in_worktree = root == context.root  # the pre-flight's; else a copy's, on a thread
            if in_worktree:  # forked from the pre-flight's warm pytest when it can stand in
                result = self.pytest_runs.run(gate, name, False, env, [], timeout)[0]
            else:
                command = Gate(name, gate.stage_command(None), timeout)
                result = run_gate(command, root, env, context.confinement, stop)
            seconds = time.monotonic() - began
            if in_worktree:
                self.durations.learn(durations)
            report = gate_report(result)
            why = report.splitlines()[0] if report else "no output"
            try:
                data = json.loads(out.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # pytest ended before its session did
                return f"gates: no call map: the traced full suite wrote none ({why})"
        try:
            data["at_import"] = import_time_of(root, data)
            recorded = CallMap.parse(commit, str(root), data)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return f"gates: no call map: the traced suite wrote a malformed one ({exc})"
        if not recorded.tests:
            return "gates: no call map: nothing was traced (does another tool trace the tests?)"
        self.kept = recorded
        if self.persist:
            try:
                self.state_dir.mkdir(parents=True, exist_ok=True)
                (self.state_dir / CALL_MAP_FILE).write_text(recorded.to_json(), encoding="utf-8")
            except OSError:
                pass  # the map only orders the stages
        failing = "" if result.passed else f"; the suite fails before any edit: {why}"
        return (
            f"gates: call map: {len(recorded.tests)} tests traced at {commit[:12]} "
            f"in {seconds:.1f} s{failing}"
        )
