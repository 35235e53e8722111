"""The protected gate (`kind = "protected"`): files the change may not touch (`paths`) and
constants whose values it may not change (`constants`), compared with the base commit
(`gates.protected`); a protected constant is also checked by value, as the code imports it
(`gates.protected_values`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

from stepswitch.gates.base import BaseTree, BaseUnreadable
from stepswitch.gates.config import ProtectedGate
from stepswitch.gates.context import ConfiguredCheck
from stepswitch.gates.protected import check_constants, protected_verdict
from stepswitch.gates.protected_values import ProtectionByValue
from stepswitch.gates.runner import GateResult
from stepswitch.gates.tree_diff import TreeView
from stepswitch.gates.value_probe import PROBE_TIMEOUT_S


@dataclass(frozen=True)
class ProtectedCheck(ConfiguredCheck[ProtectedGate]):
    def check(self, base: str) -> GateResult:
        began = time.monotonic()
        notes: list[str] = []
        if self.context.base is None:
            problems = [
                f"{self.context.root} is in no git repository: there is no base commit to "
                "compare with"
            ]
        else:
            try:
                commit = self.context.base.commit(base)
                problems = self._problems(self.context.base, commit, notes)
            except BaseUnreadable as exc:
                problems = [str(exc)]
        return protected_verdict(self.gate.name, problems, time.monotonic() - began, notes=notes)

    def _problems(self, base: BaseTree, commit: str, notes: list[str]) -> list[str]:
        gate, root = self.gate, self.context.root
        problems: list[str] = []
        if gate.paths:
            why = {p: f"protected by {p!r}" for p in gate.paths}
            problems += TreeView(root, base, commit).protected_changes(why)
        olds: dict[str, str | None] = {}
        for file, names in gate.constants.items():
            old = olds[file] = base.text(commit, file)
            current = root / file
            new = (
                current.read_text(encoding="utf-8", errors="replace") if current.is_file() else None
            )
            problems += check_constants(file, old, new, names)
        if gate.constants:  # and by value: what the code imports under those modules' names
            by_value = ProtectionByValue(
                root, self.context.layout.source_root, base.entries(commit), olds, gate.constants
            )
            problems += by_value.shadowing()
            run = partial(self.context.command, gate.name, timeout_s=PROBE_TIMEOUT_S)
            problems += by_value.imported_values(self.context.interpreter.python, run)
            notes += by_value.notes
        return problems
