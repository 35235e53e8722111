"""The golden gate (`kind = "golden"`): its command's values, printed on standard output or
written to `actual`, compared with the expected values of a committed file (`gates.golden`).

The expected values are read from the base commit, never from the worktree; in a folder outside
any repository (`ssw gates` only) they are read from the folder itself.
"""

from __future__ import annotations

import os
import shlex
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from stepswitch.gates.base import BaseUnreadable, is_commit_id
from stepswitch.gates.config import GoldenGate
from stepswitch.gates.context import ConfiguredCheck
from stepswitch.gates.golden import (
    NO_SUCH_FILE,
    GoldenFormatError,
    expected_values,
    golden_verdict,
    malformed_expected,
    read_expected,
)
from stepswitch.gates.runner import GateResult
from stepswitch.util.safe_fs import UnsafePath, read_beneath


@dataclass(frozen=True)
class GoldenCheck(ConfiguredCheck[GoldenGate]):
    def expected(self, base: str) -> object:
        """The gate's expected values at the base commit (from the folder itself when there is
        no base: see `pre_checks.truth_check`). Raises GoldenFormatError saying why they cannot
        be read."""
        gate, tree = self.gate, self.context.base
        commit = None
        if tree is not None:
            try:
                commit = tree.commit(base)
            except BaseUnreadable as exc:
                if is_commit_id(base):
                    raise GoldenFormatError(str(exc)) from exc
        if tree is None or commit is None:
            return read_expected(self.context.root / gate.expected, gate.value_format)
        try:
            data = tree.read(commit, gate.expected)
        except BaseUnreadable as exc:
            raise GoldenFormatError(str(exc)) from exc
        if data is None:
            raise GoldenFormatError(f"{NO_SUCH_FILE} at the base commit {commit[:12]}")
        return expected_values(data, gate.value_format)

    def check(self, base: str) -> GateResult:
        gate = self.gate
        began = time.monotonic()
        fmt = gate.value_format
        try:
            expected = self.expected(base)
        except GoldenFormatError as exc:
            return malformed_expected(gate.name, gate.expected, str(exc))
        if gate.actual is not None:
            return self._from_file(expected, began)
        # The gates' TMPDIR (the scratch HOME's tmp/ in a run) is the same folder inside the
        # sandbox and out: the host's own /tmp is not (the sandbox has a private one).
        scratch = Path(self.context.gate_env.get("TMPDIR") or tempfile.gettempdir())
        handle, out_name = tempfile.mkstemp(prefix="ssw-golden-", suffix=f".{fmt}", dir=scratch)
        os.close(handle)
        out_path = Path(out_name)
        try:
            # Only standard output holds the values; standard error goes to the log.
            command = f"(\n{gate.command}\n) > {shlex.quote(out_name)}"
            ran = self.context.command(gate.name, command, gate.timeout_s)
            if not ran.passed:
                return ran
            try:
                text = read_beneath(scratch, out_path.name)  # the command could swap it
            except (OSError, UnsafePath) as exc:
                why = f"{gate.name}: failed: its output could not be read back ({exc})"
                return GateResult(gate.name, False, time.monotonic() - began, why, why)
        finally:
            out_path.unlink(missing_ok=True)
        return golden_verdict(
            gate.name,
            gate.expected,
            expected,
            text,
            fmt,
            gate.rtol,
            gate.atol,
            time.monotonic() - began,
            f"{ran.log}\n--- standard output ---\n{text}",
        )

    def _from_file(self, expected: object, began: float) -> GateResult:
        gate = self.gate
        assert gate.actual is not None
        target = self.context.root / gate.actual
        before = target.stat().st_mtime_ns if target.exists() else None
        ran = self.context.command(gate.name, gate.command, gate.timeout_s)
        if not ran.passed:
            return ran
        after = target.stat().st_mtime_ns if target.exists() else None
        if after is None or after == before:
            why = f"{gate.name}: failed: the command did not write {gate.actual}"
            return GateResult(gate.name, False, time.monotonic() - began, why, f"{ran.log}\n{why}")
        text = target.read_text(encoding="utf-8", errors="replace")
        return golden_verdict(
            gate.name,
            gate.expected,
            expected,
            text,
            gate.value_format,
            gate.rtol,
            gate.atol,
            time.monotonic() - began,
            ran.log,
        )
