"""Run a repository's gates after an edit: cheap checks first, tests in two stages, one verdict.

First the checks against the base commit (`gates.pre_checks`: `ssw:protected`, the files the
gates' truth lives in; `ssw:shadowing`; `ssw:test-config`; `gates.lang.node_truth`:
`ssw:node-config`, what a Node package's gates run); each adds a verdict only when it fails,
and then no gate runs. Gates run in the configured order (detected gates: format, lint,
types, tests) and the first failing gate stops the rest. A gate with `globs` runs only when a
changed file matches one.

Each kind of gate is a module of its own (`gates.context.GateCheck`): the command gate
(`gates.command_check`), the golden gate (`gates.golden_check`), the protected gate
(`gates.protected_check`), and the tests gate with its stages (`gates.staged_tests`), their
pytest runs and the warm pytest (`gates.pytest_runs`), the call map (`gates.callmap_tracer`) and
the measured durations (`gates.durations`). Each verdict's report and log: `gates.progress`.

An exception in this code (a bug of ours) is a HarnessError, never a verdict a model would be
paid to fix.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

from stepswitch.errors import HarnessError
from stepswitch.gates.as_before import AS_BEFORE
from stepswitch.gates.base import BaseTree
from stepswitch.gates.callmap import BackgroundTrace, CallMap
from stepswitch.gates.callmap_tracer import CallMapTracer
from stepswitch.gates.changes import complete_changes
from stepswitch.gates.command_check import CommandCheck
from stepswitch.gates.config import (
    CommandGate,
    GateConfig,
    GateSpec,
    GoldenGate,
    ProtectedGate,
    SuiteGate,
    TestsGate,
)
from stepswitch.gates.context import GateCheck, GateContext
from stepswitch.gates.durations import Durations
from stepswitch.gates.findings import KnownFindings
from stepswitch.gates.golden_check import GoldenCheck
from stepswitch.gates.interpreter import (
    ImportCheck,
    Interpreter,
    check_imports,
    checkout_of,
    find_interpreter,
    gate_environment,
    project_layout,
)
from stepswitch.gates.known_failures import KnownFailures
from stepswitch.gates.lang.node_truth import NODE_CONFIG_CHECK, node_config_check
from stepswitch.gates.left_out import LEFT_OUT_CHECK
from stepswitch.gates.pre_checks import TRUTH_CHECK, left_out_check, shadow_check, truth_check
from stepswitch.gates.progress import SuiteProgress, keep
from stepswitch.gates.protected_check import ProtectedCheck
from stepswitch.gates.pytest_runs import PytestRuns
from stepswitch.gates.runner import GateResult
from stepswitch.gates.shadowing import SHADOW_CHECK
from stepswitch.gates.staged_tests import StagedTests
from stepswitch.gates.suite_check import SuiteCheck
from stepswitch.gates.suite_result import SuiteResult
from stepswitch.gates.test_config import TEST_CONFIG_CHECK, check_test_config
from stepswitch.gates.truth_paths import protected_patterns
from stepswitch.gates.warm import WarmPytest, WarmStarter
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.sandbox import Confinement

_T = TypeVar("_T")


class GateSuite:
    """The gates of one repository, run against one workspace after each edit.

    `env` is the environment without secrets; the gates run with `gate_env`, which puts the
    worktree's source first on sys.path once Python has started, and activates `interpreter`
    (found by `gates.interpreter.find_interpreter` unless given). Measured test durations are kept
    in `state_dir` (default: <checkout>/.ssw/cache when <checkout>/.ssw exists) to order later runs.
    The repository's git folder is named by `tree` (a run's) or found here, before any edit
    (`gates.base`): golden values,
    protected constants and the files the gates' truth lives in are read from the base commit
    through it, never from the worktree. In a folder outside any repository they cannot be: the
    golden files are read from the folder and the truth check is left out (`ssw gates` only).
    """

    def __init__(
        self,
        config: GateConfig,
        root: Path,
        env: dict[str, str],
        log_dir: Path | None = None,
        *,
        interpreter: Interpreter | None = None,
        state_dir: Path | None = None,
        confinement: Confinement | None = None,  # the run's sandbox, for every gate command
        tree: TreeGit | None = None,  # a run's work tree; else the checkout holding root
        start_warm: WarmStarter = WarmPytest,  # what starts the warm pytest test stages fork from
    ) -> None:
        self.config = config
        self.log_dir = log_dir
        interpreter = interpreter or find_interpreter(root, env)
        layout = project_layout(root)
        gate_env = gate_environment(root, env, interpreter, layout)
        ssw = checkout_of(root) / ".ssw"
        self.state_dir = state_dir if state_dir is not None else (ssw / "cache")
        persist = state_dir is not None or ssw.is_dir()
        durations = Durations.load(root, self.state_dir, persist)
        base = BaseTree(tree) if tree is not None else BaseTree.find(root)
        self.context = GateContext(
            root=root,
            env=env,
            gate_env=gate_env,
            interpreter=interpreter,
            layout=layout,
            confinement=confinement,
            base=base,
            tree=base.tree if base is not None else None,
            judges_commit=tree is not None,  # a run's worktree: only its commit is judged
        )
        self.truth_patterns = protected_patterns(config)
        self.keep_warm = False  # `ssw run`: a warm pytest is started ahead of each gate run
        # Command gates that failed before any edit, and what they found then (the pre-flight).
        self.known_findings: dict[str, KnownFindings] = {}
        # Suite gates that failed before any edit, and their failing tests then (the pre-flight).
        self.known_failures: dict[str, KnownFailures] = {}
        self.pytest_runs = PytestRuns(self.context, start_warm=start_warm)
        self.tracer = CallMapTracer(
            self.context, durations, self.pytest_runs, self.state_dir, persist
        )
        self.staged_tests = StagedTests(self.context, durations, self.pytest_runs, self.tracer)

    # What callers read of the context; `gate_env` may be replaced (tests of old environments).

    @property
    def root(self) -> Path:
        return self.context.root

    @property
    def env(self) -> dict[str, str]:
        return self.context.env

    @property
    def gate_env(self) -> dict[str, str]:
        return self.context.gate_env

    @gate_env.setter
    def gate_env(self, env: dict[str, str]) -> None:
        self.context.gate_env = env

    @property
    def interpreter(self) -> Interpreter:
        return self.context.interpreter

    @property
    def base(self) -> BaseTree | None:
        return self.context.base

    @property
    def tree(self) -> TreeGit | None:
        return self.context.tree

    @property
    def _tracing(self) -> BackgroundTrace | None:  # tests watch the background trace
        return self.tracer.tracing

    def _tests_gate(self) -> TestsGate | None:
        return next((g for g in self.config.gates if isinstance(g, TestsGate)), None)

    # -- before the first paid call -------------------------------------------------------------

    def interpreter_line(self) -> str:
        """`gates: Python <path> (<why>)`, for the run's start; "" when no gate is Python's."""
        return self.interpreter.line() if self.config.speaks_python else ""

    def preflight(self) -> ImportCheck:
        """Check that the tests import the project's code from inside the worktree, with the
        gates' interpreter and environment. Raises UsageError (one line) when they would not."""
        return check_imports(self.root, self.gate_env, self.interpreter, self.context.layout)

    def baseline(self) -> SuiteResult:
        """Every gate on the untouched tree, full suite included: the verdict before any edit,
        and the test durations that order the impacted stages of the first edit."""
        return self.run(None)

    def call_map(self, commit: str) -> CallMap | None:
        """The call map recorded at `commit`: this suite's own, or the one kept in `state_dir`."""
        return self.tracer.call_map(commit)

    def record_call_map(self, commit: str, background: bool = False) -> str:
        """Trace the full suite at `commit` to record its call map, unless one is kept
        (`CallMapTracer.record`); "" without a tests gate."""
        gate = self._tests_gate()
        if gate is None:
            return ""
        return self.tracer.record(gate, commit, background)

    def wait_for_call_map(self, timeout_s: float) -> bool:
        """Wait for a background trace to end (at most `timeout_s`); whether none still runs."""
        return self.tracer.wait(timeout_s)

    def trace_estimate_s(self, tests: int) -> float:
        """How long tracing the full suite of `tests` tests may take."""
        return self.tracer.estimate_s(tests)

    def collect_tests(self, gate: TestsGate, name: str) -> GateResult:
        """The tests gate's pytest collection alone, as `name` (`PytestRuns.collect`)."""
        return self.pytest_runs.collect(gate, name)

    def warm_up(self) -> None:
        """Start the warm pytest the next gate run's stages fork from (`gates.pytest_runs`)."""
        self.pytest_runs.warm_up(self._tests_gate())

    def warm_up_for_edit(self) -> None:
        """`ssw run`: an edit begins, so a gate run follows; start its warm pytest now, while the
        model works (nothing unless `keep_warm`)."""
        if self.keep_warm:
            self.warm_up()

    def warm_line(self) -> str:
        """`gates: warm pytest: ...`, for the run's start (waits for the one starting)."""
        return self.pytest_runs.warm_line(self._tests_gate())

    def warm_ready(self) -> bool:
        """Wait until the warm pytest has started; whether it can stand in for the stages."""
        return self.pytest_runs.warm_ready()

    def close(self) -> None:
        """End the warm pytest and a background trace, if they run (the end of a task)."""
        self.tracer.stop()
        self.keep_warm = False
        self.pytest_runs.close()

    # -- after each edit ------------------------------------------------------------------------

    def run(self, changed: list[str] | None, base_commit: str = "HEAD") -> SuiteResult:
        """Run the gates for a change to `changed` (None: unknown, so every gate and the full
        suite run), stopping at the first failure. The list is completed from git against
        `base_commit` (renames both ways, deletions, new files); protected gates compare with it.
        Raises HarnessError when this code, not a gate command, breaks."""
        progress = SuiteProgress(time.monotonic(), self.log_dir)
        self.warm_up()  # it imports pytest while the other gates run
        try:
            return self._run(progress, changed, base_commit)
        finally:
            # One gate run's stages only: nothing a test did in it reaches the next run. The
            # next one starts when an edit begins (`warm_up_for_edit`): after the last gate run
            # of a task there is none, and a server started here would never be used.
            self.pytest_runs.end_of_run()

    def _run(
        self, progress: SuiteProgress, changed: list[str] | None, base_commit: str
    ) -> SuiteResult:
        skipped: list[str] = []
        not_run: list[str] = []
        if news := self.tracer.news():
            progress.warm_notes.append(news)  # the background call map has ended: how it went
        # First the checks against the base commit: each runs, the first that fails is the
        # verdict, and a passing check adds none. No gate command runs among them, so they
        # share one listing of the tree (TreeGit.steady).
        pre_checks: list[tuple[str, Callable[[], GateResult | None]]] = [
            (TRUTH_CHECK, lambda: self.truth_check(base_commit)),
            (SHADOW_CHECK, lambda: self.shadow_check(base_commit)),
            (TEST_CONFIG_CHECK, lambda: check_test_config(self.base, self.root, base_commit)),
            (LEFT_OUT_CHECK, lambda: left_out_check(self.context)),
            (NODE_CONFIG_CHECK, lambda: node_config_check(self.context, self.config, base_commit)),
        ]
        with self.tree.steady() if self.tree is not None else contextlib.nullcontext():
            if changed is not None:
                changed = complete_changes(self.tree, changed, base_commit)
            for name, pre_check in pre_checks:
                found = self._guarded(name, pre_check)
                if found is not None and not found.passed and not progress.results:
                    progress.record(found)
        for gate in self.config.gates:
            if not gate.applies_to(changed):
                skipped.append(gate.name)
            elif progress.stopped:
                not_run.append(gate.name)
            else:
                run_one = partial(self._run_one, gate, changed, base_commit, progress)
                self._guarded(gate.name, run_one)
        tests = self._tests_gate()
        if tests is not None and progress.full_ran and all(r.passed for r in progress.results):
            skips = progress.skipped
            kept = self._guarded(AS_BEFORE, lambda: self.as_before(tests, base_commit, skips))
            if kept is not None:
                progress.record(kept)
        return SuiteResult(
            results=tuple(progress.results),
            skipped=tuple(skipped),
            not_run=tuple(not_run),
            impacted=progress.impacted,
            impacted_s=progress.impacted_s,
            full_s=progress.full_s,
            first_verdict_s=progress.first_verdict_s,
            full_ran=progress.full_ran,
            total_s=time.monotonic() - progress.started,
            logs=tuple(progress.logs),
            test_stages=tuple(progress.test_stages),
            first_failure_s=progress.first_failure_s,
            interpreter=self.interpreter_line(),
            warm_notes=tuple(progress.warm_notes),
        )

    @staticmethod
    def _guarded(name: str, work: Callable[[], _T]) -> _T:
        try:
            return work()
        except HarnessError:
            raise
        except Exception as exc:  # our bug: never a verdict a model is paid to fix
            raise HarnessError(
                f"gates: {name}: internal error in Stepswitch's gate code: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _run_one(
        self, gate: GateSpec, changed: list[str] | None, base: str, progress: SuiteProgress
    ) -> None:
        if isinstance(gate, TestsGate):
            self.staged_tests.run(gate, changed, base, progress)
        elif isinstance(gate, SuiteGate):
            SuiteCheck(gate, self.context, self.known_failures.get(gate.name)).run(
                changed, progress
            )
        else:
            progress.record(self.check(gate, base))

    def _check_of(self, gate: CommandGate | SuiteGate | GoldenGate | ProtectedGate) -> GateCheck:
        """The check of one gate that is not the tests gate, by its kind."""
        if isinstance(gate, SuiteGate):
            return SuiteCheck(gate, self.context, self.known_failures.get(gate.name))
        if isinstance(gate, CommandGate):
            return CommandCheck(gate, self.context, self.known_findings.get(gate.name))
        if isinstance(gate, GoldenGate):
            return GoldenCheck(gate, self.context)
        return ProtectedCheck(gate, self.context)

    def check(
        self, gate: CommandGate | SuiteGate | GoldenGate | ProtectedGate, base: str
    ) -> GateResult:
        """One gate that is not the tests gate, once, on the tree as it is; a command gate that
        already failed before any edit is judged by the findings the change adds."""
        return self._check_of(gate).check(base)

    def golden_expected(self, gate: GoldenGate, base: str) -> object:
        """The golden gate's expected values at the base commit (`GoldenCheck.expected`). Raises
        GoldenFormatError saying why they cannot be read."""
        return GoldenCheck(gate, self.context).expected(base)

    def as_before(
        self, gate: TestsGate, base: str, skipped: tuple[str, ...] = ()
    ) -> GateResult | None:
        """The base commit's test files the change edited or deleted, run as the base commit has
        them, and the `skipped` tests that ran there (`StagedTests.as_before`); None when
        there are none, or `test_changes = "allowed"`."""
        return self.staged_tests.as_before(gate, base, skipped)

    def truth_check(self, base: str) -> GateResult | None:
        """The `ssw:protected` check against the base commit (`pre_checks.truth_check`); None
        when there is no base to compare with."""
        return truth_check(self.context, self.truth_patterns, base)

    def shadow_check(self, base: str) -> GateResult | None:
        """The `ssw:shadowing` check against the base commit (`pre_checks.shadow_check`); None
        without a base commit."""
        return shadow_check(self.context, base)

    def keep(self, result: GateResult, log_dir: Path | None) -> tuple[GateResult, Path | None]:
        """`result` with its report and log cut to size, the log saved in `log_dir` when given
        (`progress.keep`)."""
        return keep(result, log_dir)

    def command(
        self, name: str, command: str, timeout_s: float, env: dict[str, str] | None = None
    ) -> GateResult:
        """A gate command in the worktree (with the gates' environment unless `env`)."""
        return self.context.command(name, command, timeout_s, env)
