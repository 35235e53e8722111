"""The command gate (`kind = "command"`): its command, once, in the worktree; it passes when the
command exits 0. One that failed before any edit (the pre-flight's known findings,
`gates.findings`) is judged by the findings the change adds."""

from __future__ import annotations

from dataclasses import dataclass

from stepswitch.gates.config import CommandGate
from stepswitch.gates.context import ConfiguredCheck
from stepswitch.gates.findings import KnownFindings, judged
from stepswitch.gates.runner import GateResult


@dataclass(frozen=True)
class CommandCheck(ConfiguredCheck[CommandGate]):
    known: KnownFindings | None = None  # what it found before any edit, when it failed then

    def check(self, base: str) -> GateResult:
        """The command's verdict; `base` plays no part."""
        gate = self.gate
        result = self.context.command(gate.name, gate.command, gate.timeout_s)
        return result if result.passed or self.known is None else judged(result, self.known)
