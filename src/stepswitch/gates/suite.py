"""Run a repository's gates after an edit: cheap checks first, tests in two stages, one verdict.

First the `ssw:protected` check: the files the gates' truth lives in (configuration, golden
files, protected paths) compared with the base commit, and new symbolic links; it adds a verdict
only when it fails, and then no gate runs. Gates run in the configured order (detected gates:
format, lint, types, tests) and the first failing gate stops the rest. A gate with `globs`
runs only when a changed file matches one. The tests gate runs the impacted tests first (test
files that import a changed module, directly or through the repository's own modules; changed
test files; tests under a changed conftest.py) and the full suite only when those pass; with
nothing impacted it goes straight to the full suite.

Every gate is a subprocess in the workspace with a timeout and an environment without API keys
(`runner.run_gate`), run by the interpreter `gates.interpreter` chooses with the worktree's own
source first on sys.path (after start-up: ADR 0019); a gate command that cannot start, times out
or reads a malformed file is a failing verdict with the reason. An exception in this code (a bug
of ours) is a HarnessError, never a verdict a model would be paid to fix.

The impacted stages run the project's own pytest collection with the `ssw_select` plugin
(stepswitch/gates/ssw_pytest/), which leaves the other test modules out and orders the items, so
`python_files`, `testpaths`, conftest files and collection hooks all apply as in the full suite.

The model sees a short report (failing test ids, the `>` and `E` lines, the first lines of a lint
error, at most REPORT_CHARS); the whole log, capped at LOG_CAP_CHARS, is saved in the run folder.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from stepswitch.errors import HarnessError, UsageError
from stepswitch.gates.as_before import AS_BEFORE, changed_base_tests, lay_out_as_before
from stepswitch.gates.base import BaseTree, BaseUnreadable, is_commit_id
from stepswitch.gates.callmap import CALL_MAP_FILE, BackgroundTrace, CallMap, changed_lines
from stepswitch.gates.changes import complete_changes
from stepswitch.gates.config import (
    CommandGate,
    GateConfig,
    GateSpec,
    GoldenGate,
    ProtectedGate,
    TestsGate,
    protected_patterns,
)
from stepswitch.gates.findings import KnownFindings, judged
from stepswitch.gates.golden import (
    NO_SUCH_FILE,
    GoldenFormatError,
    expected_values,
    golden_verdict,
    malformed_expected,
    read_expected,
)
from stepswitch.gates.impacted import impacted_tiers, named_tests
from stepswitch.gates.interpreter import (
    DEFERRED_PATH,
    ImportCheck,
    Interpreter,
    check_imports,
    checkout_of,
    find_interpreter,
    gate_environment,
    project_layout,
)
from stepswitch.gates.protected import check_constants, protected_verdict
from stepswitch.gates.protected_values import PROBE_TIMEOUT_S, ProtectionByValue
from stepswitch.gates.report import cap_log, fit_lines, gate_report
from stepswitch.gates.runner import (
    LOG_CAP_CHARS,
    REPORT_CHARS,
    Gate,
    GateResult,
    gate_result,
    run_gate,
)
from stepswitch.gates.shadowing import SHADOW_CHECK, SHADOW_FIX, shadowing_modules
from stepswitch.gates.test_config import TEST_CONFIG_CHECK, check_test_config, pin_test_config
from stepswitch.gates.tree_diff import TreeView
from stepswitch.gates.warm import WarmPytest, pytest_args
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.safe_fs import UnsafePath, read_beneath
from stepswitch.util.sandbox import Confinement

# The check of the files the gates' truth lives in: not a configurable gate (names have no ":").
TRUTH_CHECK = "ssw:protected"
TRUTH_FIX = (
    "Undo these changes: the gate configuration, the golden files and the protected paths are "
    "read from the base commit and may not change, nor be linked to; no link may lead outside "
    "the worktree."
)
PYTEST_NO_TESTS = 5  # pytest's exit status when it collected nothing
TEST_COLUMNS = 200
PLUGIN_DIR = Path(__file__).resolve().parent / "ssw_pytest"
PLUGIN = "ssw_select"
DURATIONS_FILE = "test-durations.json"
_T = TypeVar("_T")

# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestStage:
    """One pytest run of the tests gate: which files it ran and how it ended."""

    __test__ = False  # not a pytest test class

    name: str  # "tests:covered", "tests:impacted-named", "tests:impacted", ..., "tests:full"
    files: int | None  # test files selected; None: the whole suite
    duration_s: float
    passed: bool
    first_failure: str | None = None  # the first FAILED/ERROR test id
    tests: int | None = None  # tests selected in those files; None: every test they hold
    warm: bool = False  # forked from the warm pytest (gates.warm), not a fresh one


@dataclass(frozen=True)
class SuiteResult:
    results: tuple[GateResult, ...]  # in the order they ran; the last one failed, if any did
    skipped: tuple[str, ...] = ()  # gates whose globs matched no changed file
    not_run: tuple[str, ...] = ()  # gates after the first failure
    impacted: tuple[str, ...] = ()  # the test files the impacted stage ran
    impacted_s: float | None = None  # None: no impacted stage
    full_s: float | None = None  # None: the full suite did not run
    first_verdict_s: float | None = None  # suite start to the end of the first test stage
    full_ran: bool = False
    total_s: float = 0.0
    logs: tuple[Path, ...] = ()
    test_stages: tuple[TestStage, ...] = ()
    first_failure_s: float | None = None  # suite start to the end of the failing test stage
    interpreter: str = ""  # the Python the gates ran with, and why
    warm_notes: tuple[str, ...] = ()  # test stages the warm pytest could not run, and why

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def stages(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.results)

    @property
    def failed(self) -> GateResult | None:
        return next((r for r in self.results if not r.passed), None)

    @property
    def report(self) -> str:
        """What the model sees: the failing gates' short reports."""
        return "\n\n".join(r.report for r in self.results if not r.passed)

    def timings(self) -> dict[str, float | bool | None]:
        return {
            "first_verdict_s": self.first_verdict_s,
            "impacted_s": self.impacted_s,
            "full_s": self.full_s,
            "full_ran": self.full_ran,
            "first_failure_s": self.first_failure_s,
            "total_s": self.total_s,
        }


# The test files named after a changed module run as a stage of their own before the rest of
# their ring only when that rest holds at least this many files: a stage costs a pytest start.
NAMED_STAGE_MIN_REST = 3

# The traced run that records the call map stops after this long (or the gate's own timeout);
# past it the run goes on without a map.
CALL_MAP_TIMEOUT_S = 600.0

# The impacted tests outside the nearest ring run as a stage of their own only when, with the
# nearest, they are at most this share of the suite; past it the full suite is as quick.
WIDER_STAGE_SHARE = 0.5


@dataclass
class _Progress:
    started: float
    results: list[GateResult]
    logs: list[Path]
    impacted: tuple[str, ...] = ()
    impacted_s: float | None = None
    full_s: float | None = None
    first_verdict_s: float | None = None
    full_ran: bool = False
    first_failure_s: float | None = None
    test_stages: list[TestStage] | None = None
    warm_notes: list[str] = field(default_factory=list)

    def test_stage_done(self, began: float) -> float:
        now = time.monotonic()
        if self.first_verdict_s is None:
            self.first_verdict_s = now - self.started
        return now - began


def covered_first(covered: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """The covered tests (file, test id; shortest first) in at most two stages: first those of
    the file that holds the shortest one and of the file that holds the most, then the rest.
    pytest collects every file of a stage before its first test runs, and a changed line that
    most of the suite runs has covered tests in nearly every file; one or two files hold a
    failing test for nearly every change (bench/gates: 28 of 30 pyflakes mutations)."""
    if not covered:
        return []
    counts: dict[str, int] = {}
    for file, _ in covered:
        counts[file] = counts.get(file, 0) + 1
    busiest = max(counts, key=lambda f: counts[f])  # the first of the most, in covered's order
    first = {covered[0][0], busiest}
    head = [c for c in covered if c[0] in first]
    rest = [c for c in covered if c[0] not in first]
    return [head, rest] if rest else [head]


_FAILED_ID = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


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
    ) -> None:
        self.config = config
        self.confinement = confinement
        self.root = root
        self.env = env
        self.log_dir = log_dir
        self.interpreter = interpreter or find_interpreter(root, env)
        self.layout = project_layout(root)
        self.gate_env = gate_environment(root, env, self.interpreter, self.layout)
        ssw = checkout_of(root) / ".ssw"
        self.state_dir = state_dir if state_dir is not None else (ssw / "cache")
        self._persist = state_dir is not None or ssw.is_dir()
        self._durations: dict[str, float] = self._load_durations()
        self.base = BaseTree(tree) if tree is not None else BaseTree.find(root)
        self.tree = self.base.tree if self.base is not None else None
        self.truth_patterns = protected_patterns(config)
        self._call_map: CallMap | None = None
        self._warm: WarmPytest | None = None
        self.keep_warm = False  # `ssw run`: start the next run's warm pytest as one ends
        # Command gates that failed before any edit, and what they found then (the pre-flight).
        self.known_findings: dict[str, KnownFindings] = {}
        self._tracing: BackgroundTrace | None = None  # the call map, traced on a thread
        self._warm_off = ""  # why no warm pytest is started any more

    # -- before the first paid call -------------------------------------------------------------

    def interpreter_line(self) -> str:
        """`gates: Python <path> (<why>)`, for the run's start."""
        return self.interpreter.line()

    def preflight(self) -> ImportCheck:
        """Check that the tests import the project's code from inside the worktree, with the
        gates' interpreter and environment. Raises UsageError (one line) when they would not."""
        return check_imports(self.root, self.gate_env, self.interpreter, self.layout)

    def baseline(self) -> SuiteResult:
        """Every gate on the untouched tree, full suite included: the verdict before any edit,
        and the test durations that order the impacted stages of the first edit."""
        return self.run(None)

    def call_map(self, commit: str) -> CallMap | None:
        """The call map recorded at `commit`: this suite's own, or the one kept in `state_dir`."""
        if self._call_map is not None and self._call_map.commit == commit:
            return self._call_map
        found = CallMap.read(self.state_dir / CALL_MAP_FILE, commit)
        if found is None or not found.usable_at(self.root):
            return None
        self._call_map = found
        return found

    def record_call_map(self, commit: str, background: bool = False) -> str:
        """Run the full suite once on the untouched tree at `commit`, tracing which tests run
        which lines (`gates.callmap`), unless a map of `commit` is already kept. Returns the line
        the run's start shows; a suite that cannot be traced leaves no map, and says why.
        `background`: trace a copy of the commit's files on a thread instead (a large suite
        takes many times its own length to trace), the stages following the import graph until
        the map is ready; the first gate run after it says how it went."""
        gate = next((g for g in self.config.gates if isinstance(g, TestsGate)), None)
        if gate is None:
            return ""
        if not gate.call_map:
            return "gates: call map: off (call_map = false)"
        if self.call_map(commit) is not None:
            return f"gates: call map: kept from an earlier run at {commit[:12]}"
        if not background or self.tree is None:
            timeout = min(gate.timeout_s, CALL_MAP_TIMEOUT_S)
            return self._trace(gate, commit, self.root, self.gate_env, timeout, None)
        copy = Path(tempfile.mkdtemp(prefix="ssw-start-", dir=self.gate_env.get("TMPDIR")))
        self.tree.check_out(commit, copy)
        root = copy / self.tree.prefix if self.tree.prefix else copy
        env = gate_environment(root, self.env, self.interpreter, project_layout(root))
        self._tracing = BackgroundTrace(
            lambda stop: self._trace(gate, commit, root, env, gate.timeout_s, stop), copy
        )
        return (
            f"gates: call map: tracing the full suite at {commit[:12]} in the background, on a "
            "copy of its files; until it is ready the stages follow the import graph"
        )

    def wait_for_call_map(self, timeout_s: float) -> bool:
        """Wait for a background trace to end (at most `timeout_s`); whether none still runs."""
        return self._tracing is None or self._tracing.wait(timeout_s)

    def trace_estimate_s(self, tests: int) -> float:
        """How long tracing the full suite may take: five times the suite's measured length
        when earlier runs measured it (the trace costs three to six times the suite), else a
        tenth of a second per collected test."""
        known = sum(self._durations.values())
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
        scratch = self.gate_env.get("TMPDIR") or None
        with tempfile.TemporaryDirectory(prefix="ssw-callmap-", dir=scratch) as folder:
            out = Path(folder) / "calls.json"
            durations = Path(folder) / "durations.json"
            spec: dict[str, object] = {
                "files": None,
                "durations": str(durations),
                "calls": {"root": str(root), "out": str(out)},
            }
            stage_env = self._stage_env(spec, Path(folder), root=root)
            env = {**stage_env, DEFERRED_PATH: gate_env[DEFERRED_PATH]}
            began = time.monotonic()
            name = f"{gate.name}:call-map"
            result = run_gate(
                Gate(name, gate.stage_command(None), timeout), root, env, self.confinement, stop
            )
            seconds = time.monotonic() - began
            if root == self.root:
                self._learn_durations(durations)
            report = gate_report(result)
            why = report.splitlines()[0] if report else "no output"
            try:
                data = json.loads(out.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # pytest ended before its session did
                return f"gates: no call map: the traced full suite wrote none ({why})"
        try:
            recorded = CallMap.parse(commit, str(root), data)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return f"gates: no call map: the traced suite wrote a malformed one ({exc})"
        if not recorded.tests:
            return "gates: no call map: nothing was traced (does another tool trace the tests?)"
        self._call_map = recorded
        if self._persist:
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

    # -- after each edit ------------------------------------------------------------------------

    def run(self, changed: list[str] | None, base_commit: str = "HEAD") -> SuiteResult:
        """Run the gates for a change to `changed` (None: unknown, so every gate and the full
        suite run), stopping at the first failure. The list is completed from git against
        `base_commit` (renames both ways, deletions, new files); protected gates compare with it.
        Raises HarnessError when this code, not a gate command, breaks."""
        progress = _Progress(time.monotonic(), [], [], test_stages=[])
        self.warm_up()  # it imports pytest while the other gates run
        try:
            return self._run(progress, changed, base_commit)
        finally:
            # One gate run's stages only: nothing a test did in it reaches the next run.
            warm, self._warm = self._warm, None
            if warm is not None:
                if warm.why.startswith("is not used"):  # refused at start-up: it would again
                    self._warm_off = warm.why
                warm.close()
            if self.keep_warm:
                self.warm_up()

    def _run(self, progress: _Progress, changed: list[str] | None, base_commit: str) -> SuiteResult:
        if changed is not None:
            changed = complete_changes(self.tree, changed, base_commit)
        skipped: list[str] = []
        not_run: list[str] = []
        if self._tracing is not None and (news := self._tracing.news()):
            progress.warm_notes.append(news)  # the background call map has ended: how it went
        # First, the files the gates' truth lives in; a passing check adds no verdict.
        truth = self._guarded(TRUTH_CHECK, lambda: self.truth_check(base_commit))
        if truth is not None and not truth.passed:
            self._record(truth, progress)
        shadow = self._guarded(SHADOW_CHECK, lambda: self.shadow_check(base_commit))
        if shadow is not None and not shadow.passed and not progress.results:
            self._record(shadow, progress)
        tested = self._guarded(
            TEST_CONFIG_CHECK, lambda: check_test_config(self.base, self.root, base_commit)
        )
        if tested is not None and not tested.passed and not progress.results:
            self._record(tested, progress)
        for gate in self.config.gates:
            if not gate.applies_to(changed):
                skipped.append(gate.name)
            elif progress.results and not progress.results[-1].passed:
                not_run.append(gate.name)
            else:
                run_one = partial(self._run_one, gate, changed, base_commit, progress)
                self._guarded(gate.name, run_one)
        tests = next((g for g in self.config.gates if isinstance(g, TestsGate)), None)
        if tests is not None and progress.full_ran and all(r.passed for r in progress.results):
            kept = self._guarded(AS_BEFORE, lambda: self.as_before(tests, base_commit))
            if kept is not None:
                self._record(kept, progress)
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
            test_stages=tuple(progress.test_stages or ()),
            first_failure_s=progress.first_failure_s,
            interpreter=self.interpreter.line(),
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
        self, gate: GateSpec, changed: list[str] | None, base: str, progress: _Progress
    ) -> None:
        if isinstance(gate, TestsGate):
            self._tests(gate, changed, base, progress)
        else:
            self._record(self.check(gate, base), progress)

    def check(self, gate: CommandGate | GoldenGate | ProtectedGate, base: str) -> GateResult:
        """One gate that is not the tests gate, once, on the tree as it is; a command gate that
        already failed before any edit is judged by the findings the change adds."""
        if isinstance(gate, CommandGate):
            result = self.command(gate.name, gate.command, gate.timeout_s)
            known = self.known_findings.get(gate.name)
            return result if result.passed or known is None else judged(result, known)
        if isinstance(gate, GoldenGate):
            return self._golden(gate, base)
        return self._protected(gate, base)

    def keep(self, result: GateResult, log_dir: Path | None) -> tuple[GateResult, Path | None]:
        """`result` with its report cut to REPORT_CHARS and its log capped; the log saved in
        `log_dir` (when given) under the next number."""
        log = cap_log(result.log)
        report = result.report
        if len(report) > REPORT_CHARS:
            report = fit_lines(report.splitlines(), REPORT_CHARS)
        path = None
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            number = sum(1 for _ in log_dir.iterdir()) + 1
            path = log_dir / f"{number:03d}-{_safe_name(result.name)}.log"
            path.write_text(log, encoding="utf-8")
        return replace(result, report=report, log=log), path

    def _record(self, result: GateResult, progress: _Progress) -> None:
        kept, path = self.keep(result, self.log_dir)
        progress.results.append(kept)
        if path is not None:
            progress.logs.append(path)

    def command(
        self, name: str, command: str, timeout_s: float, env: dict[str, str] | None = None
    ) -> GateResult:
        """A gate command in the worktree (with the gates' environment unless `env`)."""
        gate = Gate(name, command, timeout_s)
        result = run_gate(gate, self.root, env or self.gate_env, self.confinement)
        return replace(result, report=gate_report(result))

    # -- the tests gate -------------------------------------------------------------------------

    def _load_durations(self) -> dict[str, float]:
        try:
            data = json.loads((self.state_dir / DURATIONS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def _learn_durations(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # the stage ended before pytest's session did
        seconds = data.get("seconds", {})
        rootdir = Path(str(data.get("rootdir", self.root)))
        for rel, value in seconds.items():
            try:
                key = (rootdir / rel).resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                continue
            self._durations[key] = float(value)
        if self._persist:
            try:
                self.state_dir.mkdir(parents=True, exist_ok=True)
                target = self.state_dir / DURATIONS_FILE
                target.write_text(json.dumps(self._durations, sort_keys=True), encoding="utf-8")
            except OSError:
                pass  # the durations only order the stages

    def _pytest_env(self) -> dict[str, str]:
        """The environment of every test stage but the two names each stage sets."""
        env = dict(self.gate_env)
        # pytest cuts its summary lines to the terminal width; without a terminal that is 80.
        env.setdefault("COLUMNS", str(TEST_COLUMNS))
        env["PYTHONPATH"] = os.pathsep.join([env.get("PYTHONPATH", ""), str(PLUGIN_DIR)]).strip(
            os.pathsep
        )
        return env

    def _stage_env(
        self,
        spec: dict[str, object],
        folder: Path,
        base: str = "HEAD",
        notes: list[str] | None = None,
        root: Path | None = None,
    ) -> dict[str, str]:
        """A stage's environment: its selection in `folder`, and pytest's configuration from
        the base commit (gates.test_config), said in `notes`, rooted at `root` (the folder the
        stage runs in: the worktree unless given)."""
        spec_path = folder / "select.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        env = self._pytest_env()
        # In PYTEST_ADDOPTS, so that any pytest the tests command starts takes them.
        where = root if root is not None else self.root
        pinned = pin_test_config(self.base, where, base, self.confinement, folder)
        words = shlex.join(["-p", PLUGIN, *(pinned.args if pinned else ())])
        env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} {words}".strip()
        if pinned is not None and notes is not None:
            notes.append(pinned.note)
        env["SSW_SELECT"] = str(spec_path)
        return env

    # -- the warm pytest (gates.warm) -----------------------------------------------------------

    def _warm_args(self, gate: TestsGate) -> list[str] | None:
        if not gate.warm:
            return None
        return pytest_args(gate.stage_command(None), self.interpreter.python, self.gate_env)

    def warm_up(self) -> None:
        """Start the warm pytest the next gate run's stages fork from, unless one is running or
        the tests gate's command is not one it can stand in for."""
        gate = next((g for g in self.config.gates if isinstance(g, TestsGate)), None)
        if self._warm_off or self._warm is not None or gate is None:
            return
        if self._warm_args(gate) is not None:
            env = self._pytest_env()
            self._warm = WarmPytest(self.interpreter.python, env, self.root, self.confinement)

    def warm_line(self) -> str:
        """`gates: warm pytest: ...`, for the run's start: whether the test stages fork from a
        warm pytest, and why not (waits for the one starting to be ready)."""
        gate = next((g for g in self.config.gates if isinstance(g, TestsGate)), None)
        if gate is None:
            return ""
        if not gate.warm:
            return "gates: warm pytest: off (warm = false)"
        if self._warm_args(gate) is None:
            return (
                "gates: warm pytest: not used, the tests command is not "
                f"`{self.interpreter.python} -m pytest ...`"
            )
        if self._warm_off:
            return f"gates: warm pytest: {self._warm_off}"
        if self.warm_ready():
            return "gates: warm pytest: ready, the test stages of each gate run fork from it"
        return f"gates: warm pytest: {self._warm.why if self._warm else 'not started'}"

    def warm_ready(self) -> bool:
        """Wait until the warm pytest has started; whether it can stand in for the stages."""
        return self._warm is not None and self._warm.ready()

    def close(self) -> None:
        """End the warm pytest and a background trace, if they run (the end of a task)."""
        tracing, self._tracing = self._tracing, None
        if tracing is not None:
            tracing.stop()
        self.keep_warm = False
        warm, self._warm = self._warm, None
        if warm is not None:
            warm.close()

    def _pytest(
        self, gate: TestsGate, name: str, selected: bool, env: dict[str, str], notes: list[str]
    ) -> tuple[GateResult, bool]:
        """One stage's pytest, and whether it was forked from the warm pytest (when it can stand
        in), else the stage command as written; why not goes to `notes` and the stage's log.
        `selected`: a selection, where "no tests" (exit 5) passes."""
        command = gate.stage_command(None)
        args = self._warm_args(gate)
        if self._warm is not None and args is not None:
            done = self._warm.run(args, env, gate.timeout_s, LOG_CAP_CHARS)
            if done is not None:
                if selected and done.exit_code == PYTEST_NO_TESTS:
                    done = replace(done, exit_code=0)
                result = gate_result(Gate(name, command, gate.timeout_s), done)
                return replace(result, report=gate_report(result)), True
            why = f"{name} ran as a fresh pytest: the warm pytest {self._warm.why}"
            notes.append(why)
            if self._warm.why.startswith("is not used"):
                self._warm_off = self._warm.why  # it would say so again: no more this task
            self._warm.close()
            self._warm = None
        else:
            why = ""
        if selected:
            command = (
                f"{command}\nstatus=$?\n"
                f'[ "$status" -eq {PYTEST_NO_TESTS} ] && exit 0\nexit "$status"'
            )
        result = self.command(name, command, gate.timeout_s, env)
        return (replace(result, log=f"[ssw: {why}]\n{result.log}") if why else result), False

    def _stage(
        self,
        gate: TestsGate,
        name: str,
        files: list[str] | None,
        order: list[str],
        progress: _Progress,
        tests: list[str] | None = None,
        base: str = "HEAD",
    ) -> GateResult:
        """One pytest run: the selected `files` (None: the whole suite), items in `order`; with
        `tests`, only those test ids of the files, in that order; pytest configured as at
        `base`."""
        # Under the gates' TMPDIR: inside a sandbox, the host's /tmp is not the command's.
        scratch = self.gate_env.get("TMPDIR") or None
        with tempfile.TemporaryDirectory(prefix="ssw-stage-", dir=scratch) as folder:
            durations = Path(folder) / "durations.json"
            absolute = [str(self.root / f) for f in order]
            spec: dict[str, object] = {
                "files": absolute if files is not None else None,
                "order": absolute,
                "durations": str(durations),
            }
            if tests is not None:
                spec["tests"] = tests
            notes: list[str] = []
            env = self._stage_env(spec, Path(folder), base, notes)
            began = time.monotonic()
            # A selection that holds no test makes pytest exit 5: that is no failure here.
            result, warm = self._pytest(gate, name, files is not None, env, progress.warm_notes)
            seconds = progress.test_stage_done(began)
            self._learn_durations(durations)
        if not result.passed and PLUGIN in result.log and "Error while loading" in result.log:
            raise HarnessError(
                f"gates: {name}: pytest could not load Stepswitch's {PLUGIN} plugin from "
                f"{PLUGIN_DIR} (does the gate command reset PYTHONPATH?)"
            )
        if notes:
            result = replace(result, log="".join(f"[ssw: {n}]\n" for n in notes) + result.log)
        failure = _FAILED_ID.search(result.log)
        assert progress.test_stages is not None
        progress.test_stages.append(
            TestStage(
                name,
                len(files) if files is not None else None,
                seconds,
                result.passed,
                failure.group(1) if failure and not result.passed else None,
                len(tests) if tests is not None else None,
                warm,
            )
        )
        if not result.passed and progress.first_failure_s is None:
            progress.first_failure_s = time.monotonic() - progress.started
        self._record(result, progress)
        return result

    def _covered(self, base: str) -> tuple[list[tuple[str, str]], bool]:
        """From the call map of `base`: the tests that ran a changed line, shortest first, each
        with its file; and whether the map placed every change (then the import graph's stages
        add nothing)."""
        if self.base is None:
            return [], False
        try:
            commit = self.base.commit(base)
        except BaseUnreadable:
            return [], False
        found = self.call_map(commit)
        lines = changed_lines(self.tree, commit) if found is not None else None
        if found is None or lines is None:
            return [], False
        tests, complete = found.covering(lines)
        placed: list[tuple[str, str]] = []
        for test in tests:
            path = found.test_file(test, self.root)
            if path is None or not path.is_relative_to(self.root):
                return [], False  # recorded where its test ids mean other files
            placed.append((path.relative_to(self.root).as_posix(), test))
        return placed, complete

    def _tests(
        self, gate: TestsGate, changed: list[str] | None, base: str, progress: _Progress
    ) -> None:
        stages: list[tuple[str, list[str]]] = []
        nearest: list[str] = []
        wider: list[str] = []
        complete = False
        began_impacted = time.monotonic()
        if gate.impacted_first and changed is not None:
            covered, complete = self._covered(base)
            progress.impacted = tuple(dict.fromkeys(f for f, _ in covered))
            # The tests that ran a changed line on the base commit, alone and first: those of
            # at most two test files, then the rest (see covered_first).
            for name, part in zip(
                (":covered", ":covered-rest"), covered_first(covered), strict=False
            ):
                files = list(dict.fromkeys(f for f, _ in part))
                tests = [t for _, t in part]
                result = self._stage(gate, gate.name + name, files, files, progress, tests, base)
                if not result.passed:
                    progress.impacted_s = time.monotonic() - began_impacted
                    return
        if gate.impacted_first and changed is not None and not complete:
            try:
                nearest, wider, total = impacted_tiers(self.root, changed, self._durations)
            except (OSError, ValueError, RecursionError):
                nearest, wider, total = [], [], 0  # no impacted stage: the full suite decides
            progress.impacted = tuple(sorted({*progress.impacted, *nearest, *wider}))
            # Changed modules too: a project that collects doctest modules tests them there.
            sources = [c for c in changed if c.endswith(".py") and (self.root / c).is_file()]
            extra = [c for c in sources if c not in progress.impacted]
            first = nearest or wider
            named = named_tests(first, changed)
            rest = [f for f in first if f not in named]
            if named and len(rest) >= NAMED_STAGE_MIN_REST:
                # The tests named after the changed module, alone first: a large ring (every test
                # behind a conftest that imports the change) is collected whole before its first
                # test runs, and the named test is the likeliest to fail.
                stages = [
                    (f"{gate.name}:impacted-named", named + extra),
                    (f"{gate.name}:impacted", rest),
                ]
            else:
                stages = [(f"{gate.name}:impacted", first + extra)]
            # The wider ring is worth its own stage only when it is well short of the suite.
            if nearest and wider and len(nearest) + len(wider) <= total * WIDER_STAGE_SHARE:
                stages.append((f"{gate.name}:impacted-wider", wider))
        for name, files in stages:
            if not [f for f in files if f in progress.impacted]:
                continue
            result = self._stage(gate, name, files, files, progress, base=base)
            if not result.passed:
                progress.impacted_s = time.monotonic() - began_impacted
                return
        if progress.impacted:
            progress.impacted_s = time.monotonic() - began_impacted
        # The full suite decides; what has not passed yet runs first: the wider ring, then the
        # rest by measured time, the tests that already passed last.
        ran = {f for _, files in stages for f in files}
        rest = sorted(
            (f for f in self._durations if f not in ran),
            key=lambda f: (self._durations[f], f),
        )
        order = list(dict.fromkeys([*[f for f in wider if f not in ran], *rest, *nearest]))
        began = time.monotonic()
        self._stage(gate, f"{gate.name}:full", None, order, progress, base=base)
        progress.full_s = time.monotonic() - began
        progress.full_ran = True

    def golden_expected(self, gate: GoldenGate, base: str) -> object:
        """The gate's expected values at the base commit (from the folder itself when there is
        no base: see `truth_check`). Raises GoldenFormatError saying why they cannot be read."""
        commit = None
        if self.base is not None:
            try:
                commit = self.base.commit(base)
            except BaseUnreadable as exc:
                if is_commit_id(base):
                    raise GoldenFormatError(str(exc)) from exc
        if self.base is None or commit is None:
            return read_expected(self.root / gate.expected, gate.value_format)
        try:
            data = self.base.read(commit, gate.expected)
        except BaseUnreadable as exc:
            raise GoldenFormatError(str(exc)) from exc
        if data is None:
            raise GoldenFormatError(f"{NO_SUCH_FILE} at the base commit {commit[:12]}")
        return expected_values(data, gate.value_format)

    def _golden(self, gate: GoldenGate, base: str) -> GateResult:
        began = time.monotonic()
        fmt = gate.value_format
        try:
            expected = self.golden_expected(gate, base)
        except GoldenFormatError as exc:
            return malformed_expected(gate.name, gate.expected, str(exc))
        if gate.actual is not None:
            return self._golden_from_file(gate, expected, began)
        # The gates' TMPDIR (the scratch HOME's tmp/ in a run) is the same folder inside the
        # sandbox and out: the host's own /tmp is not (the sandbox has a private one).
        scratch = Path(self.gate_env.get("TMPDIR") or tempfile.gettempdir())
        handle, out_name = tempfile.mkstemp(prefix="ssw-golden-", suffix=f".{fmt}", dir=scratch)
        os.close(handle)
        out_path = Path(out_name)
        try:
            # Only standard output holds the values; standard error goes to the log.
            command = f"(\n{gate.command}\n) > {shlex.quote(out_name)}"
            ran = self.command(gate.name, command, gate.timeout_s)
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

    def _golden_from_file(self, gate: GoldenGate, expected: object, began: float) -> GateResult:
        assert gate.actual is not None
        target = self.root / gate.actual
        before = target.stat().st_mtime_ns if target.exists() else None
        ran = self.command(gate.name, gate.command, gate.timeout_s)
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

    def as_before(self, gate: TestsGate, base: str) -> GateResult | None:
        """The base commit's test files the change edited or deleted, run as the base commit has
        them against the changed code (gates/as_before.py); None when there are none, or
        `test_changes = "allowed"`."""
        if gate.test_changes == "allowed" or self.base is None or self.tree is None:
            return None
        began = time.monotonic()
        try:
            commit = self.base.commit(base)
            tests = changed_base_tests(self.base, commit, self.tree.changed_paths(commit))
        except (BaseUnreadable, UsageError):
            return None  # the truth check says why
        if not tests:
            return None
        scratch = self.gate_env.get("TMPDIR")
        try:
            copy, root = lay_out_as_before(
                self.tree, self.base, commit, tests, Path(scratch) if scratch else None
            )
        except UnsafePath as exc:
            why = f"{AS_BEFORE}: failed: the base commit's tests cannot be put back: {exc}"
            return GateResult(AS_BEFORE, False, time.monotonic() - began, why, why)
        try:
            folder = copy.parent / f"{copy.name}-stage"
            folder.mkdir()
            notes: list[str] = []
            # pytest configured as at the base commit, rooted in the copy (gates.test_config).
            env = self._stage_env({"files": None}, folder, commit, notes, root=root)
            there = gate_environment(root, self.env, self.interpreter, project_layout(root))
            env[DEFERRED_PATH] = there[DEFERRED_PATH]
            command = Gate(AS_BEFORE, gate.stage_command(tests), gate.timeout_s)
            ran = run_gate(command, root, env, self.confinement)
            ran = replace(ran, log="".join(f"[ssw: {n}]\n" for n in notes) + ran.log)
        finally:
            shutil.rmtree(copy, ignore_errors=True)
            shutil.rmtree(copy.parent / f"{copy.name}-stage", ignore_errors=True)
        shown = ", ".join(tests)
        if ran.passed:
            report = f"{AS_BEFORE}: passed: {shown}, as the base commit has them"
            return replace(ran, report=report, duration_s=time.monotonic() - began)
        report = (
            f"{AS_BEFORE}: failed: {shown}, which the change edited or deleted, fail as the base "
            "commit has them: a test must still hold in its first form (a repository whose "
            'tasks change behaviour sets test_changes = "allowed" in its tests gate)\n'
            + gate_report(ran)
        )
        return replace(ran, report=report, duration_s=time.monotonic() - began)

    def shadow_check(self, base: str) -> GateResult | None:
        """Modules the change added at the worktree's root or source root that shadow the
        standard library or an installed distribution (`gates.shadowing`): any fails, naming
        them. None without a base commit to tell added from the project's own."""
        if self.base is None:
            return None
        began = time.monotonic()
        try:
            base_paths = set(self.base.entries(self.base.commit(base)))
        except BaseUnreadable:
            return None  # the truth check says why
        roots = (self.root, self.layout.source_root)
        problems = shadowing_modules(roots, self.root, base_paths, self.interpreter.python)
        return protected_verdict(
            SHADOW_CHECK,
            problems,
            time.monotonic() - began,
            "the change adds modules imported instead of the standard library's or a package's",
            SHADOW_FIX,
        )

    # -- protected ------------------------------------------------------------------------------

    def truth_check(self, base: str) -> GateResult | None:
        """The files the gates' truth lives in (the gate configuration, .stepswitch.toml, golden
        files, protected paths), and symbolic links, against the base commit: any change fails,
        naming the path. None when there is no base to compare with: outside a repository, or
        `base` a name (`ssw gates`: HEAD) in one without commits; a commit id that cannot be read
        fails."""
        if self.base is None:
            return None
        began = time.monotonic()
        try:
            commit = self.base.commit(base)
        except BaseUnreadable as exc:
            if not is_commit_id(base):
                return None
            return protected_verdict(TRUTH_CHECK, [str(exc)], time.monotonic() - began)
        try:
            view = TreeView(self.root, self.base, commit)
            problems = view.protected_changes(self.truth_patterns)
            problems += view.new_links(self.truth_patterns)
        except BaseUnreadable as exc:
            problems = [str(exc)]
        return protected_verdict(
            TRUTH_CHECK,
            problems,
            time.monotonic() - began,
            "the files the gates read their truth from changed",
            TRUTH_FIX,
        )

    def _protected(self, gate: ProtectedGate, base: str) -> GateResult:
        began = time.monotonic()
        notes: list[str] = []
        if self.base is None:
            problems = [
                f"{self.root} is in no git repository: there is no base commit to compare with"
            ]
        else:
            try:
                commit = self.base.commit(base)
                problems = self._protected_problems(gate, self.base, commit, notes)
            except BaseUnreadable as exc:
                problems = [str(exc)]
        return protected_verdict(gate.name, problems, time.monotonic() - began, notes=notes)

    def _protected_problems(
        self, gate: ProtectedGate, base: BaseTree, commit: str, notes: list[str]
    ) -> list[str]:
        problems: list[str] = []
        if gate.paths:
            why = {p: f"protected by {p!r}" for p in gate.paths}
            problems += TreeView(self.root, base, commit).protected_changes(why)
        olds: dict[str, str | None] = {}
        for file, names in gate.constants.items():
            old = olds[file] = base.text(commit, file)
            current = self.root / file
            new = (
                current.read_text(encoding="utf-8", errors="replace") if current.is_file() else None
            )
            problems += check_constants(file, old, new, names)
        if gate.constants:  # and by value: what the code imports under those modules' names
            by_value = ProtectionByValue(
                self.root, self.layout.source_root, base.entries(commit), olds, gate.constants
            )
            problems += by_value.shadowing()
            run = partial(self.command, gate.name, timeout_s=PROBE_TIMEOUT_S)
            problems += by_value.imported_values(self.interpreter.python, run)
            notes += by_value.notes
        return problems
