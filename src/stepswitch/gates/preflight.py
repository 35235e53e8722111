"""The pre-flight: every gate checked and run once on the untouched start tree, so that a gate
that can never pass is found before the run spends on it (docs/decisions/0014). What needs no
command is checked before any paid call (`begin_preflight`); the gates' runs (`Preflight.finish`)
come before it too, but on a first run of a base commit `ssw run` sends the plan's call beside
them and waits for their verdict before anything else (docs/decisions/0088).

First what needs no command: each command's first word resolves (on the gates' PATH, or as a
path in the worktree), each golden file is in the base commit and parses, each protected path
matches a file of the base commit and each protected constant is assigned there. Then the import
check (`gates.interpreter`). Then each gate runs once with its own timeout, in order, none
stopping the others: command, golden and protected gates in full, the tests gate as pytest's
collection only (`--collect-only`), and the check of the files the gates' truth lives in.

A gate that cannot run at all (a command not found or not executable, a timeout, pytest that
cannot start or refuses its options or a conftest) is a `GateUnusable` (a ConfigError, exit 2):
one line, `gates: <gate>: <problem> (fix: ...)`. A gate that runs and fails is no error: its
verdict is part of the baseline, and a gate other than the tests that already fails is said
plainly at the start (the change will have to fix it too). Failing tests are what most tasks
start from; the collection tells whether they can run.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from stepswitch.errors import ConfigError, Interrupted
from stepswitch.gates.base import BaseUnreadable
from stepswitch.gates.baseline import COLLECT, Baseline, BaselineGate, detail_line, is_collect
from stepswitch.gates.baseline_store import fingerprint, keep_baseline, reuse_baseline
from stepswitch.gates.config import (
    CommandGate,
    GateConfig,
    GateSpec,
    GoldenGate,
    ProtectedGate,
    SuiteGate,
    TestsGate,
)
from stepswitch.gates.findings import KnownFindings, findings
from stepswitch.gates.golden import NO_SUCH_FILE, GoldenFormatError
from stepswitch.gates.interpreter import ImportCheck
from stepswitch.gates.known_failures import KnownFailures
from stepswitch.gates.plugins import end_early_probes
from stepswitch.gates.protected import (
    ALL_CONSTANTS,
    check_constants,
    constant_bindings,
    matches_protected,
)
from stepswitch.gates.runner import GateResult
from stepswitch.gates.suite import GateSuite
from stepswitch.util.on_thread import OnThread

_EXIT = re.compile(r": failed \(exit (\d+)\)")
_PER_FILE = re.compile(r"^\S+: (\d+)$", re.M)  # pytest -qq --collect-only: "tests/test_a.py: 2"
_COLLECTED = re.compile(r"(\d+) tests? collected")
_COLLECT_ERRORS = re.compile(r"(\d+) errors? during collection")
# Words a shell runs itself, or that start shell syntax: nothing to look up on PATH.
_SHELL_WORDS = frozenset(
    {"!", "[", "[[", "{", "(", ".", ":", "alias", "builtin", "case", "cd", "command", "echo"}
    | {"eval", "exec", "exit", "export", "false", "for", "if", "printf", "pushd", "read", "set"}
    | {"shift", "source", "test", "time", "trap", "true", "type", "ulimit", "umask", "unset"}
    | {"until", "while"}
)
_SYNTAX = re.compile(r"[$`(){}|;&<>*?\[\]=]")


class GateUnusable(ConfigError):
    """A gate that cannot run at all on the untouched tree: `gates: <gate>: <problem> (fix:
    <fix>)`, exit 2, before any paid call but the plan's sent beside the gates (ADR 0088)."""

    def __init__(self, gate: str, problem: str, fix: str) -> None:
        super().__init__("gates", gate, problem, fix)
        self.gate = gate


# -- where a gate is configured, for the fix ---------------------------------------------------


def _where(config: GateConfig, gate: GateSpec, key: str) -> str:
    if config.config_file == ".stepswitch.toml":
        return f"[gates.{gate.name}].{key} in .stepswitch.toml"
    if config.config_file is not None:
        return f"[tool.stepswitch.gates.{gate.name}].{key}"
    return ""


def _change(config: GateConfig, gate: GateSpec, key: str, what: str, detected: str = "") -> str:
    """`<what> <where the key is>`; for a detected gate, `detected` or how to configure one."""
    where = _where(config, gate, key)
    if where:
        return f"{what} {where}"
    return detected or "configure the gates under [tool.stepswitch.gates]; this one was detected"


def _install_or_change(config: GateConfig, gate: GateSpec) -> str:
    return _change(
        config,
        gate,
        "command",
        "install it in the repository's venv or change",
        "install it in the repository's venv (the repository configures the tool, so the gate "
        "was detected), or configure the gates under [tool.stepswitch.gates]",
    )


# -- what needs no command ---------------------------------------------------------------------


def missing_command(command: str, env: dict[str, str], root: Path) -> str | None:
    """Why the first word of `command` cannot run ("command not found: X", "not executable:
    X"); None when it can, or when it is shell syntax (which running the gate then checks)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return None
    while words and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)  # VAR=value before the command
    if not words or words[0] in _SHELL_WORDS or _SYNTAX.search(words[0]):
        return None
    word = words[0]
    if "/" not in word:
        found = shutil.which(word, path=env.get("PATH", os.defpath))
        return None if found else f"command not found: {word}"
    path = Path(word).expanduser()
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        return f"command not found: {word}"
    return None if os.access(path, os.X_OK) else f"not executable: {word}"


def _static(suite: GateSuite, commit: str, gate: GateSpec) -> None:
    config = suite.config
    command = None if isinstance(gate, ProtectedGate) else gate.command
    if command is not None:
        problem = missing_command(command, suite.gate_env, suite.root)
        if problem is not None:
            raise GateUnusable(gate.name, problem, _install_or_change(config, gate))
    if isinstance(gate, GoldenGate):
        try:
            suite.golden_expected(gate, commit)
        except GoldenFormatError as exc:
            why = str(exc)
            change = _change(config, gate, "expected", "change")
            first = "commit the file" if why.startswith(NO_SUCH_FILE) else "fix it and commit it"
            problem = f"the golden file {gate.expected}: {why}"
            raise GateUnusable(gate.name, problem, f"{first}, or {change}") from exc
    if isinstance(gate, ProtectedGate):
        _static_protected(suite, commit, gate)


def _static_protected(suite: GateSuite, commit: str, gate: ProtectedGate) -> None:
    assert suite.base is not None
    config = suite.config
    entries = suite.base.entries(commit)
    for index, pattern in enumerate(gate.paths):
        if not any(matches_protected(path, [pattern]) for path in entries):
            raise GateUnusable(
                gate.name,
                f"the protected path {pattern!r} matches no file of the base commit {commit[:12]}",
                _change(config, gate, f"paths[{index}]", "correct"),
            )
    for file, names in gate.constants.items():
        old = suite.base.text(commit, file)
        fix = _change(config, gate, "constants", "correct")
        problems = check_constants(file, old, old, names)
        if problems:
            raise GateUnusable(gate.name, problems[0], fix)
        assert old is not None
        upper = [n for n in constant_bindings(old) if re.fullmatch(r"[A-Z][A-Z0-9_]*", n)]
        if ALL_CONSTANTS in names and not upper:
            raise GateUnusable(
                gate.name, f"{file}: {ALL_CONSTANTS!r} protects nothing: no UPPER_CASE name", fix
            )


# -- running each gate once --------------------------------------------------------------------


def _unusable(suite: GateSuite, gate: GateSpec, result: GateResult) -> None:
    """Raise GateUnusable when `result` says the gate could not run at all."""
    config = suite.config
    head = result.report.splitlines()[0] if result.report else ""
    timeout = getattr(gate, "timeout_s", 0.0)
    if "timed out after" in head:
        raise GateUnusable(
            gate.name,
            f"timed out after {timeout:g} s on the untouched tree (timeout_s = {timeout:g})",
            _change(config, gate, "timeout_s", "make the command finish sooner or raise"),
        )
    if "; command not found: " in head:
        word = head.split("; command not found: ", 1)[1].strip()
        raise GateUnusable(
            gate.name, f"command not found: {word}", _install_or_change(config, gate)
        )
    code = _EXIT.search(head)
    if code is not None and code[1] == "126":
        raise GateUnusable(
            gate.name,
            f"the command cannot be executed (exit 126): {detail_line(result.log)}",
            _change(config, gate, "command", "make it executable or change"),
        )
    if "cannot start" in head:
        raise GateUnusable(
            gate.name,
            f"the command cannot start: {detail_line(result.report)}",
            _change(config, gate, "command", "change"),
        )


def _collect(suite: GateSuite, gate: TestsGate) -> GateResult:
    """The tests gate's pytest collection, and what it found."""
    name = f"{gate.name}:{COLLECT}"
    ran = suite.collect_tests(gate, name)
    _unusable(suite, gate, ran)
    code = _EXIT.search(ran.report.splitlines()[0] if ran.report else "")
    status = 0 if ran.passed else int(code[1]) if code else -1
    per_file = [int(n) for n in _PER_FILE.findall(ran.log)]
    counted = _COLLECTED.search(ran.log)
    count = sum(per_file) if per_file else int(counted[1]) if counted else 0
    tests = f"collected {count} test{'s' if count != 1 else ''}"
    if status == 0:
        return GateResult(name, True, ran.duration_s, f"{name}: {tests}", ran.log)
    if status == 5:
        report = f"{name}: no tests collected: the tests gate fails until the change adds one"
        return GateResult(name, False, ran.duration_s, report, ran.log)
    failing = [line for line in ran.log.splitlines() if line.startswith("ERROR ")]
    if status in (1, 2) and failing:  # test modules that do not import: 1 under -x, else 2
        errors = _COLLECT_ERRORS.search(ran.log)
        many = int(errors[1]) if errors else len(failing)
        text = f"{tests}, {many} collection error{'s' if many != 1 else ''}"
        report = "\n".join([f"{name}: {text}", *failing[:5]])
        return GateResult(name, False, ran.duration_s, report, ran.log)
    lines = [line.strip() for line in ran.log.splitlines() if line.strip()]
    why = next((line for line in lines if line.startswith("E ")), lines[-1] if lines else "")
    raise GateUnusable(
        gate.name,
        f"pytest cannot collect the tests (exit {status}): {why.removeprefix('E').strip()}",
        "make `"
        + gate.stage_command(None)
        + " --collect-only` work in the repository, e.g. install pytest in its venv, or "
        + _change(suite.config, gate, "command", "change"),
    )


def _once(suite: GateSuite, commit: str, gate: GateSpec) -> GateResult:
    if isinstance(gate, TestsGate):
        return _collect(suite, gate)
    result = suite.check(gate, commit)
    if not isinstance(gate, ProtectedGate):
        _unusable(suite, gate, result)
    return result


def preflight_gates(
    suite: GateSuite, base_commit: str, log_dir: Path | None = None, run_id: str = ""
) -> Baseline:
    """Check and run every gate of `suite` once on the untouched tree at `base_commit`, before
    any edit; each full log is saved in `log_dir` when given. Returns the baseline verdicts;
    raises GateUnusable (exit 2) for a gate that cannot run at all, ConfigError when the base
    commit cannot be read, and UsageError when the tests would import code from outside the
    worktree. With a `run_id` (a run's), a baseline kept by an earlier run of the same commit in
    the same environment stands in for the gates' runs, and a full one is kept for the next
    (`gates.baseline_store`)."""
    return begin_preflight(suite, base_commit, log_dir, run_id).finish()


@dataclass(frozen=True)
class Preflight:
    """A pre-flight past its checks that need no command (`begin_preflight`): `kept`, the
    baseline an earlier run of the commit kept (ADR 0075), or else the gates still to run
    (`finish`), which `ssw run` may do on a thread beside the plan's call (ADR 0088); `stop`
    set, it starts no further gate."""

    suite: GateSuite
    commit: str
    log_dir: Path | None
    run_id: str
    print_: str  # the environment's fingerprint ("" without a run id)
    kept: Baseline | None
    stop: threading.Event = field(default_factory=threading.Event)

    def finish(self) -> Baseline:
        """The baseline: the kept one, or each gate run once (a refusal raised)."""
        suite, commit = self.suite, self.commit
        if self.kept is not None:
            suite.warm_up()
            return replace(self.kept, call_map=_call_map(suite, commit, self.kept.gates))
        try:
            imports, truth = _first_checks(suite, commit)
            # The tests' collection and the call map's traced run fork from a warm pytest
            # started now, which then serves the first edit's gate run (ADR 0044); it imports
            # pytest meanwhile.
            suite.warm_up()
            baseline = _run_once(suite, commit, imports, truth, self.log_dir, self.stop)
        except BaseException:
            suite.close()  # a refusal or Ctrl-C: nothing the pre-flight started goes on running
            end_early_probes()
            raise
        if self.run_id:
            keep_baseline(suite, baseline, self.run_id, self.print_)
        return baseline


def begin_preflight(
    suite: GateSuite, base_commit: str, log_dir: Path | None = None, run_id: str = ""
) -> Preflight:
    """What the pre-flight checks before any command: the base commit readable, each gate's
    command, golden file and protected paths (a refusal raised here costs nothing); and, with a
    `run_id`, the baseline an earlier run kept for this commit and environment."""
    config = suite.config
    if not config.gates:
        return Preflight(suite, base_commit, log_dir, run_id, "", Baseline(()))
    if suite.base is None:
        raise ConfigError(
            str(suite.root), "(repository)", "is in no git repository", "run `git init` there"
        )
    try:
        commit = suite.base.commit(base_commit)
        for gate in config.gates:
            _static(suite, commit, gate)
    except BaseUnreadable as exc:
        raise ConfigError(str(suite.root), "(git)", str(exc), "check the repository") from exc
    # The environment, fingerprinted once: what a kept pre-flight is looked up by and kept under.
    print_ = fingerprint(suite) if run_id else ""
    reused = reuse_baseline(suite, commit, print_) if run_id else None
    return Preflight(suite, commit, log_dir, run_id, print_, reused)


def _first_checks(suite: GateSuite, commit: str) -> tuple[ImportCheck, GateResult | None]:
    """The import check and the truth check on the untouched tree, at the same time (ADR 0084):
    the import check's interpreter and the interpreter the first pytest asks for its plugins
    start on threads, each waiting on its child, while this thread compares the gates' truth
    with the base commit. Raises the import check's refusal, as when they ran one by one."""
    if any(not isinstance(gate, ProtectedGate) for gate in suite.config.gates):
        suite.context.probe_plugins_early()  # a gate will run a command: it needs the answer
    checking = OnThread(suite.preflight, "ssw-import-check")
    try:
        truth = suite.truth_check(commit)
    finally:
        imports = checking.result()  # its refusal first, whatever the truth check found
    return imports, truth


def _run_once(
    suite: GateSuite,
    commit: str,
    imports: ImportCheck,
    truth: GateResult | None,
    log_dir: Path | None,
    stop: threading.Event,
) -> Baseline:
    """Each gate once on the untouched tree, then the call map: the baseline. Once `stop` is
    set (the run ended beside it), no further gate starts."""
    config = suite.config
    verdicts: list[BaselineGate] = []
    if truth is not None and not truth.passed:
        verdicts.append(_verdict(suite, truth, log_dir))
    judged: dict[str, int] = {}
    judged_tests: dict[str, int] = {}
    for gate in config.gates:
        _stopped(stop)
        began = time.monotonic()
        result = _once(suite, commit, gate)
        verdicts.append(_verdict(suite, result, log_dir, time.monotonic() - began))
        start = findings(result.log) if isinstance(gate, CommandGate) else None
        if not result.passed and start:  # from here on, judged by what the change adds
            suite.known_findings[gate.name] = KnownFindings(gate.name, start)
            judged[gate.name] = sum(start.values())
        if isinstance(gate, SuiteGate) and not result.passed and result.failed_tests:
            # A suite: judged by the failing tests the change adds (gates.known_failures).
            suite.known_failures[gate.name] = KnownFailures(
                gate.name, frozenset(result.failed_tests)
            )
            judged_tests[gate.name] = len(result.failed_tests)
    _stopped(stop)
    call_map = _call_map(suite, commit, verdicts)
    return Baseline(tuple(verdicts), imports, commit, call_map, judged, judged_tests)


def _stopped(stop: threading.Event) -> None:
    if stop.is_set():
        raise Interrupted("the run's end")  # never shown: the run that set it has ended


def _call_map(suite: GateSuite, commit: str, verdicts: Sequence[BaselineGate]) -> str:
    """The tests that ran each line, traced once on the untouched tree (unless kept): they run
    first after an edit to those lines (the stage `tests:covered`). What the start says of it."""
    collected = all(g.passed for g in verdicts if is_collect(g.name))
    if not collected:
        return "gates: no call map: the tests do not collect before any edit"
    tests = sum(_collected_count(g.report) for g in verdicts if is_collect(g.name))
    return suite.record_call_map(commit, background=suite.trace_estimate_s(tests) > FOREGROUND_S)


# A trace expected to take longer than this runs in the background (`record_call_map`): the
# first paid call need not wait for it.
FOREGROUND_S = 120.0


def _collected_count(report: str) -> int:
    found = re.search(r"collected (\d+) test", report)
    return int(found[1]) if found else 0


def _verdict(
    suite: GateSuite, result: GateResult, log_dir: Path | None, seconds: float | None = None
) -> BaselineGate:
    kept, _ = suite.keep(result, log_dir)
    duration = result.duration_s if seconds is None else seconds
    return BaselineGate(kept.name, kept.passed, round(duration, 3), kept.report)
