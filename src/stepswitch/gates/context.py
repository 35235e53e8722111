"""What every gate runs with (`GateContext`), and what a kind of gate implements (`GateCheck`).

Every gate is a subprocess in the workspace with a timeout and an environment without API keys
(`runner.run_gate`), run by the interpreter `gates.interpreter` chooses with the worktree's own
source first on sys.path (after start-up: ADR 0019); a gate command that cannot start, times out
or reads a malformed file is a failing verdict with the reason.

A kind of gate is a module with a class that satisfies `GateCheck`, made from the gate's table
(`gates.config`) and the suite's `GateContext` (a `ConfiguredCheck`): `gates.command_check`,
`gates.golden_check`, `gates.protected_check`. `GateSuite._check_of` picks it by the table's
type. The tests gate gives a verdict per stage instead of one (`gates.staged_tests`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from stepswitch.gates.base import BaseTree
from stepswitch.gates.interpreter import Interpreter, Layout
from stepswitch.gates.plugins import ask_plugins_early, plugin_env
from stepswitch.gates.report import gate_report
from stepswitch.gates.runner import Gate, GateResult, run_gate
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.sandbox import Confinement


@dataclass
class GateContext:
    """The worktree the gates of one suite run in, and how: `env` is the environment without
    secrets, `gate_env` the one the gates run with (the worktree's source first on sys.path once
    Python has started, `interpreter` activated); `base` reads the base commit (None outside any
    repository) and `tree` is its work tree."""

    root: Path
    env: dict[str, str]
    gate_env: dict[str, str]
    interpreter: Interpreter
    layout: Layout
    confinement: Confinement | None  # the run's sandbox, for every gate command
    base: BaseTree | None
    tree: TreeGit | None
    judges_commit: bool = False  # a run's: files its commit leaves out fail the gates

    def probe_plugins_early(self) -> None:
        """Ask the gates' interpreter for its pytest plugins now, on a thread, beside what
        the caller does next (the pre-flight: the import check); `pytest_env` takes the answer."""
        ask_plugins_early(self.interpreter.python, self._plugin_tree)

    @property
    def _plugin_tree(self) -> Path:
        return self.tree.work_tree if self.tree is not None else self.root

    def pytest_env(self) -> dict[str, str]:
        """The gates' environment as any pytest a gate starts takes it: no plugin the tree
        carries, the environment's own loaded (`gates.plugins`)."""
        return plugin_env(self.gate_env, self.interpreter.python, self._plugin_tree)

    def command(
        self, name: str, command: str, timeout_s: float, env: dict[str, str] | None = None
    ) -> GateResult:
        """A gate command in the worktree (with the gates' environment, as a pytest it starts
        takes it, unless `env`)."""
        gate = Gate(name, command, timeout_s)
        result = run_gate(gate, self.root, env or self.pytest_env(), self.confinement)
        return replace(result, report=gate_report(result))


class GateCheck(Protocol):
    """One configured gate that gives one verdict on the tree as it is."""

    @property
    def name(self) -> str: ...

    def check(self, base: str) -> GateResult:
        """The verdict, with the base commit `base` as the truth it is compared with."""
        ...


class _Named(Protocol):
    @property
    def name(self) -> str: ...


G = TypeVar("G", bound=_Named)


@dataclass(frozen=True)
class ConfiguredCheck(Generic[G]):
    """What a kind of gate's check is made of: the gate's table, and the suite's context it runs
    in; its name is the gate's."""

    gate: G
    context: GateContext

    @property
    def name(self) -> str:
        return self.gate.name
