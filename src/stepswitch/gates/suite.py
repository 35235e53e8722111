"""Run a repository's gates after an edit: cheap checks first, tests in two stages, one verdict.

Gates run in the configured order (detected gates: format, lint, types, tests) and the first
failing gate stops the rest. A gate with `globs` runs only when a changed file matches one. The
tests gate runs the impacted tests first (test files that import a changed module, directly or
through the repository's own modules; changed test files; tests under a changed conftest.py) and
the full suite only when those pass; with nothing impacted it goes straight to the full suite.

Every gate is a subprocess in the workspace with a timeout and an environment without API keys
(`runner.run_gate`); a gate that cannot run, times out or reads a malformed file is a failing
verdict with the reason. The model sees a short report (failing test ids, the `>` and `E` lines,
the first lines of a lint error, at most REPORT_CHARS); the whole log, capped at LOG_CAP_CHARS, is
saved in the run folder.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from stepswitch.gates.config import (
    CommandGate,
    GateConfig,
    GateSpec,
    GoldenGate,
    ProtectedGate,
    TestsGate,
)
from stepswitch.gates.golden import (
    GoldenFormatError,
    golden_verdict,
    malformed_expected,
    read_expected,
)
from stepswitch.gates.impacted import impacted_tiers
from stepswitch.gates.protected import check_constants, protected_verdict, touched_paths
from stepswitch.gates.report import cap_log, fit_lines, gate_report
from stepswitch.gates.runner import REPORT_CHARS, Gate, GateResult, run_gate

GIT_TIMEOUT_S = 60.0
PYTEST_NO_TESTS = 5  # pytest's exit status when it collected nothing
TEST_COLUMNS = 200

# -- results ------------------------------------------------------------------------------------


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
            "total_s": self.total_s,
        }


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

    def test_stage_done(self, began: float) -> float:
        now = time.monotonic()
        if self.first_verdict_s is None:
            self.first_verdict_s = now - self.started
        return now - began


def _broken(name: str, exc: Exception) -> GateResult:
    why = f"{name}: failed: the gate could not run: {type(exc).__name__}: {exc}"
    return GateResult(name, False, 0.0, why, why + "\n" + traceback.format_exc())


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)


class GateSuite:
    """The gates of one repository, run against one workspace after each edit."""

    def __init__(
        self, config: GateConfig, root: Path, env: dict[str, str], log_dir: Path | None = None
    ) -> None:
        self.config = config
        self.root = root
        self.env = env
        self.log_dir = log_dir

    def run(self, changed: list[str] | None, base_commit: str = "HEAD") -> SuiteResult:
        """Run the gates for a change to `changed` (None: unknown, so every gate and the full
        suite run), stopping at the first failure. Protected gates compare with `base_commit`."""
        progress = _Progress(time.monotonic(), [], [])
        skipped: list[str] = []
        not_run: list[str] = []
        for gate in self.config.gates:
            if not gate.applies_to(changed):
                skipped.append(gate.name)
            elif progress.results and not progress.results[-1].passed:
                not_run.append(gate.name)
            else:
                try:
                    self._run_one(gate, changed, base_commit, progress)
                except Exception as exc:  # a gate that breaks is a failing gate, not a crash
                    self._record(_broken(gate.name, exc), progress)
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
        )

    def _run_one(
        self, gate: GateSpec, changed: list[str] | None, base: str, progress: _Progress
    ) -> None:
        if isinstance(gate, CommandGate):
            self._record(self._command(gate.name, gate.command, gate.timeout_s), progress)
        elif isinstance(gate, TestsGate):
            self._tests(gate, changed, progress)
        elif isinstance(gate, GoldenGate):
            self._record(self._golden(gate), progress)
        else:
            self._record(self._protected(gate, changed, base), progress)

    def _record(self, result: GateResult, progress: _Progress) -> None:
        log = cap_log(result.log)
        report = result.report
        if len(report) > REPORT_CHARS:
            report = fit_lines(report.splitlines(), REPORT_CHARS)
        progress.results.append(replace(result, report=report, log=log))
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            number = sum(1 for _ in self.log_dir.iterdir()) + 1
            path = self.log_dir / f"{number:03d}-{_safe_name(result.name)}.log"
            path.write_text(log, encoding="utf-8")
            progress.logs.append(path)

    def _command(
        self, name: str, command: str, timeout_s: float, env: dict[str, str] | None = None
    ) -> GateResult:
        result = run_gate(Gate(name, command, timeout_s), self.root, env or self.env)
        return replace(result, report=gate_report(result))

    def _tests(self, gate: TestsGate, changed: list[str] | None, progress: _Progress) -> None:
        # pytest cuts its summary lines to the terminal width; without a terminal that is 80.
        env = {**self.env, "COLUMNS": self.env.get("COLUMNS", str(TEST_COLUMNS))}
        stages: list[tuple[str, list[str]]] = []
        if gate.impacted_first and changed is not None:
            try:
                nearest, wider, total = impacted_tiers(self.root, changed)
            except (OSError, ValueError, RecursionError):
                nearest, wider, total = [], [], 0  # no impacted stage: the full suite decides
            progress.impacted = tuple(sorted(nearest + wider))
            stages = [(f"{gate.name}:impacted", nearest or wider)]
            # The wider ring is worth its own stage only when it is well short of the suite.
            if nearest and wider and len(nearest) + len(wider) <= total * WIDER_STAGE_SHARE:
                stages.append((f"{gate.name}:impacted-wider", wider))
        began_impacted = time.monotonic()
        for name, files in stages:
            if not files:
                continue
            # Explicit files that hold no test make pytest exit 5: that is no failure here.
            command = (
                f"{gate.stage_command(files)}\nstatus=$?\n"
                f'[ "$status" -eq {PYTEST_NO_TESTS} ] && exit 0\nexit "$status"'
            )
            began = time.monotonic()
            result = self._command(name, command, gate.timeout_s, env)
            progress.test_stage_done(began)
            self._record(result, progress)
            if not result.passed:
                progress.impacted_s = time.monotonic() - began_impacted
                return
        if progress.impacted:
            progress.impacted_s = time.monotonic() - began_impacted
        began = time.monotonic()
        full = gate.stage_command(None)
        result = self._command(f"{gate.name}:full", full, gate.timeout_s, env)
        progress.full_s = progress.test_stage_done(began)
        progress.full_ran = True
        self._record(result, progress)

    def _golden(self, gate: GoldenGate) -> GateResult:
        began = time.monotonic()
        fmt = gate.value_format
        try:
            expected = read_expected(self.root / gate.expected, fmt)
        except GoldenFormatError as exc:
            return malformed_expected(gate.name, gate.expected, str(exc))
        if gate.actual is not None:
            return self._golden_from_file(gate, expected, began)
        handle, out_name = tempfile.mkstemp(prefix="ssw-golden-", suffix=f".{fmt}")
        os.close(handle)
        out_path = Path(out_name)
        try:
            # Only standard output holds the values; standard error goes to the log.
            command = f"(\n{gate.command}\n) > {shlex.quote(out_name)}"
            ran = self._command(gate.name, command, gate.timeout_s)
            if not ran.passed:
                return ran
            text = out_path.read_text(encoding="utf-8", errors="replace")
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
        ran = self._command(gate.name, gate.command, gate.timeout_s)
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

    # -- protected ------------------------------------------------------------------------------

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )

    def _protected(self, gate: ProtectedGate, changed: list[str] | None, base: str) -> GateResult:
        began = time.monotonic()
        try:
            problems = self._protected_problems(gate, changed, base)
        except (OSError, subprocess.SubprocessError) as exc:
            problems = [f"cannot read the change from git: {exc}"]
        return protected_verdict(gate.name, problems, time.monotonic() - began)

    def _protected_problems(
        self, gate: ProtectedGate, changed: list[str] | None, base: str
    ) -> list[str]:
        check = self._git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
        if check.returncode != 0:
            why = check.stderr.decode("utf-8", "replace").strip() or "no such commit"
            return [f"cannot read the base commit {base!r}: {why}"]
        problems: list[str] = []
        if gate.paths:
            diff = self._git("diff", "--name-only", "--relative", "-z", base)
            others = self._git("ls-files", "--others", "--exclude-standard", "-z")
            touched = {
                p
                for out in (diff.stdout, others.stdout)
                for p in out.decode("utf-8", "replace").split("\0")
                if p
            }
            problems += touched_paths(touched | set(changed or ()), gate.paths)
        for file, names in gate.constants.items():
            shown = self._git("show", f"{base}:./{file}")
            old = shown.stdout.decode("utf-8", "replace") if shown.returncode == 0 else None
            current = self.root / file
            new = (
                current.read_text(encoding="utf-8", errors="replace") if current.is_file() else None
            )
            problems += check_constants(file, old, new, names)
        return problems
