"""Run gate commands in the task's workspace: a subprocess with a timeout, an output cap and an
environment without API keys. A gate that cannot run is a failing gate with the reason."""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass
from pathlib import Path

from stepswitch.util.proc import ProcResult, run_in_group
from stepswitch.util.sandbox import Confinement, reaped

REPORT_CHARS = 2000  # what the model sees of a failing gate; the full log is saved
LOG_CAP_CHARS = 2_000_000  # of a saved log: its head and its tail are kept


@dataclass(frozen=True)
class Gate:
    name: str
    command: str
    timeout_s: float = 600.0


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    duration_s: float
    report: str  # short: what the model needs to act on (run_gate gives the headline only)
    log: str  # the whole output, for the run folder
    # The failing tests' ids its runner's report names (a suite gate's; empty when none or
    # unread): what the pre-flight keeps of a suite that already fails.
    failed_tests: tuple[str, ...] = ()


def run_gate(
    gate: Gate,
    root: Path,
    env: dict[str, str],
    confinement: Confinement | None = None,
    stop: threading.Event | None = None,
) -> GateResult:
    argv = ["bash", "-c", gate.command]
    done = run_in_group(
        confinement.wrap(argv, root) if confinement else argv,
        cwd=root,
        env=env,
        timeout_s=gate.timeout_s,
        output_cap=LOG_CAP_CHARS,
        stop=stop,
        reaped=reaped(confinement),
    )
    return gate_result(gate, done)


def gate_result(gate: Gate, done: ProcResult) -> GateResult:
    """The verdict of `gate` from how its command ended."""
    if done.start_error is not None:
        why = f"{gate.name}: {done.start_error}"
        return GateResult(gate.name, False, 0.0, why, done.start_error)
    if done.timed_out:
        why = f"{gate.name}: timed out after {gate.timeout_s:g} s"
        return GateResult(gate.name, False, done.duration_s, why, done.output)
    passed = done.exit_code == 0
    head = f"{gate.name}: {'passed' if passed else f'failed (exit {done.exit_code})'}"
    if done.exit_code == 127:
        head += f"; command not found: {shlex.split(gate.command)[0]}"
    # The headline only: gates.report turns the log into what the model sees.
    return GateResult(gate.name, passed, done.duration_s, head, done.output)
