"""The gate runner of a repository for `run_task`: its gates, read once at the base commit,
checked and run on the untouched tree before the first paid call (`preflight`; or beside the
plan's call, `begin_preflight` and `settle`, ADR 0088), then run against the workspace after
each edit, full logs kept in the run folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from stepswitch.gates.baseline import Baseline
from stepswitch.gates.bytecode import drop_bytecode
from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.preflight import Preflight, begin_preflight
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.suite_result import SuiteResult
from stepswitch.gates.warm import WarmPytest, WarmStarter
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.sandbox import Confinement


class RepoGates:
    """`config` must be read from the worktree before any edit (it then is the base commit's);
    the suite finds the repository's git folder here, so make it before the first edit too."""

    def __init__(
        self,
        config: GateConfig,
        root: Path,
        env: Mapping[str, str],
        base_commit: str,
        log_dir: Path | None = None,
        confinement: Confinement | None = None,
        tree: TreeGit | None = None,  # the run's work tree, its git named outright
        start_warm: WarmStarter = WarmPytest,  # what starts the gates' warm pytest
    ) -> None:
        self.config = config
        self.base_commit = base_commit
        self._suite = GateSuite(
            config,
            root,
            dict(env),
            log_dir,
            confinement=confinement,
            tree=tree,
            start_warm=start_warm,
        )
        self.baseline: Baseline | None = None  # set by preflight
        # The pre-flight runs beside the plan's call (ADR 0088): `description` leaves its
        # verdict's lines out, said when it comes
        self.beside = False

    @property
    def suite(self) -> GateSuite:
        """The suite itself, for `ssw gates`, which runs it outside a task."""
        return self._suite

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(g.name for g in self.config.gates)

    @property
    def description(self) -> str:
        if not self.config.gates:
            lines = ["  no gates configured or detected: only the review judges this change"]
            return "\n".join([*lines, *(f"  {note}" for note in self.config.notes)])
        lines = [f"  gates ({self.config.source}): {', '.join(self.names)}"]
        lines += [f"  {note}" for note in self.config.notes]
        lines += [f"  gates: {name}: {why}" for name, why in self.config.reasons]
        tests = next((g for g in self.config.gates if isinstance(g, TestsGate)), None)
        if tests is not None and tests.test_changes == "checked":
            lines.append(
                "  gates: a test file the change edits or deletes also runs as the base commit "
                'has it (test_changes = "allowed" in the tests gate turns this off)'
            )
        elif tests is not None:
            lines.append('  gates: test_changes = "allowed": edited tests are judged as edited')
        if interpreter := self._suite.interpreter_line():  # none on a Node, Rust or Go repository
            lines.append(f"  {interpreter}")
        if self.beside:  # said when the verdict comes (`verdict_lines`)
            return "\n".join(lines)
        return "\n".join([*lines, *self.verdict_lines])

    def preflight(self, log_dir: Path | None = None, run_id: str = "") -> Baseline:
        """Before any paid call, on the untouched tree: every gate can run (else a one-line
        ConfigError, exit 2), the tests import the worktree's code (else a UsageError), and each
        gate's verdict before any edit, kept in `baseline` for the run's record (full logs in
        `log_dir` when given). A run (`run_id`) reuses the baseline an earlier run of the same
        base commit kept in the same environment, and keeps its own for the next."""
        return self.settle(self.begin_preflight(log_dir, run_id).finish())

    def begin_preflight(self, log_dir: Path | None = None, run_id: str = "") -> Preflight:
        """`preflight` up to its first command: its checks that need no command, and a kept
        baseline looked up; `settle` takes what its `finish` gives (ADR 0088)."""
        return begin_preflight(self._suite, self.base_commit, log_dir, run_id)

    def settle(self, baseline: Baseline) -> Baseline:
        """The pre-flight's verdict is in: kept in `baseline`."""
        self.baseline = baseline
        # From here on a warm pytest waits for each edit's stages (gates.warm): the first is the
        # one the pre-flight's collection and call map forked from.
        self._suite.keep_warm = True
        self._suite.warm_up()
        return baseline

    @property
    def verdict_lines(self) -> list[str]:
        """What the run's start says of the warm pytest and the baseline, once there is one."""
        warm = self._suite.warm_line()  # waits for the warm pytest starting
        lines = [f"  {warm}"] if warm else []
        if self.baseline is None:
            return lines
        if self.baseline.imports is not None and self.config.speaks_python:
            lines.append(f"  {self.baseline.imports.line()}")
        return lines + [f"  {line}" for line in self.baseline.lines()]

    def before_edit(self) -> None:
        """An edit step begins: the warm pytest its gate run forks from starts now, while the
        model works (the first is started by the pre-flight)."""
        self._suite.warm_up_for_edit()

    def warm_ready(self) -> bool:
        """Wait until the warm pytest the next gate run forks from has started (benchmarks)."""
        return self._suite.warm_ready()

    def close(self) -> None:
        """The end of the task: end the warm pytest."""
        self._suite.close()

    def run(self, changed: list[str]) -> SuiteResult:
        # Bytecode the agent's commands left in the worktree is never what the gates test.
        drop_bytecode(self._suite.root, keep=self._suite.interpreter.venv)
        return self._suite.run(changed, self.base_commit)
