"""Run gate commands in the task's workspace: a subprocess with a timeout, an output cap and an
environment without API keys. A gate that cannot run is a failing gate with the reason."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPORT_CHARS = 2000  # what the model sees of a failing gate; the full log is saved


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


def run_gate(gate: Gate, root: Path, env: dict[str, str]) -> GateResult:
    began = time.monotonic()
    try:
        proc = subprocess.Popen(
            ["bash", "-c", gate.command],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return GateResult(gate.name, False, 0.0, f"{gate.name}: cannot start: {exc}", str(exc))
    try:
        out, _ = proc.communicate(timeout=gate.timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        text = out.decode("utf-8", "replace")
        why = f"{gate.name}: timed out after {gate.timeout_s:g} s"
        return GateResult(gate.name, False, time.monotonic() - began, why, text)
    text = out.decode("utf-8", "replace")
    passed = proc.returncode == 0
    head = f"{gate.name}: {'passed' if passed else f'failed (exit {proc.returncode})'}"
    if proc.returncode == 127:
        head += f"; command not found: {shlex.split(gate.command)[0]}"
    # The headline only: gates.report turns the log into what the model sees.
    return GateResult(gate.name, passed, time.monotonic() - began, head, text)
