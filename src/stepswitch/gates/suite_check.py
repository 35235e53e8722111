"""The suite gate (`kind = "suite"`): a test suite in another language, run by its runner
(`gates/lang/`). For now its full command, once; impacted-first and the failing tests' names are
built in the runner modules."""

from __future__ import annotations

from dataclasses import dataclass

from stepswitch.gates.config import SuiteGate
from stepswitch.gates.context import ConfiguredCheck
from stepswitch.gates.runner import GateResult


@dataclass(frozen=True)
class SuiteCheck(ConfiguredCheck[SuiteGate]):
    def check(self, base: str) -> GateResult:
        """The full suite's verdict; `base` plays no part yet."""
        gate = self.gate
        return self.context.command(gate.name, gate.command, gate.timeout_s)
