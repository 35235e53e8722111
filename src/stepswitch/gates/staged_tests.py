"""The tests gate (`kind = "tests"`): pytest in stages, each a verdict of its own, the first that
fails ending the gate.

After an edit the impacted tests run first: the tests that ran a changed line on the base commit
(the call map, `gates.callmap_tracer`), then the test files that import a changed module,
directly or through the repository's own modules, changed test files and tests under a changed
conftest.py (`gates.impacted`); the full suite runs only when those pass, and with nothing
impacted it goes straight to the full suite. An impacted stage that would make the stages before
the full suite every test is skipped and said (ADR 0076): the full suite would run them again.
When the full suite passes, the base commit's test files the change edited or deleted run as the
base commit has them (`gates.as_before`).
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from stepswitch.errors import HarnessError, UsageError
from stepswitch.gates.as_before import (
    AS_BEFORE,
    changed_base_tests,
    changed_conftests,
    lay_out_as_before,
)
from stepswitch.gates.base import BaseUnreadable
from stepswitch.gates.callmap import changed_lines
from stepswitch.gates.callmap_tracer import CallMapTracer
from stepswitch.gates.config import TestsGate
from stepswitch.gates.context import GateContext
from stepswitch.gates.durations import Durations
from stepswitch.gates.impacted import impacted_tiers, named_tests
from stepswitch.gates.interpreter import DEFERRED_PATH, gate_environment, project_layout
from stepswitch.gates.plugins import PLUGIN, PLUGIN_DIR
from stepswitch.gates.progress import SuiteProgress, TestStage
from stepswitch.gates.pytest_runs import PytestRuns
from stepswitch.gates.report import gate_report
from stepswitch.gates.runner import Gate, GateResult, run_gate
from stepswitch.gates.session_record import SESSION_FILE, judged_by_session, tests_ran
from stepswitch.gates.skipped_tests import OUTCOMES_FILE, read_outcomes, skipped_at_base_check
from stepswitch.util.safe_fs import UnsafePath

# The test files named after a changed module run as a stage of their own before the rest of
# their ring only when that rest holds at least this many files: a stage costs a pytest start.
NAMED_STAGE_MIN_REST = 3

# The impacted tests outside the nearest ring run as a stage of their own only when, with the
# nearest, they are at most this share of the suite; past it the full suite is as quick.
WIDER_STAGE_SHARE = 0.5

_FAILED_ID = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def _skipped(stage: str, what: str, total: int) -> str:
    return (
        f"gates: {stage} skipped: with the impacted stages before it, it would run every "
        f"{what} of the suite ({total}), which the full suite runs next"
    )


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


@dataclass(frozen=True)
class StagedTests:
    """The tests gate of one suite: its stages, recorded in a gate run's progress."""

    context: GateContext
    durations: Durations  # order the stages, and are learnt from each
    pytest_runs: PytestRuns
    tracer: CallMapTracer  # the call map that puts the covered tests first

    def run(
        self, gate: TestsGate, changed: list[str] | None, base: str, progress: SuiteProgress
    ) -> None:
        """The stages for a change to `changed` (None: unknown, so only the full suite), each
        recorded in `progress`; pytest configured as at `base`. An impacted stage that would
        bring the impacted stages to every test of the suite is skipped and said: the full
        suite runs next anyway, and the tests would run twice (ADR 0076)."""
        root, measured = self.context.root, self.durations.seconds
        stages: list[tuple[str, list[str]]] = []
        nearest: list[str] = []
        wider: list[str] = []
        total = 0  # test files in the suite, as the import graph finds them
        complete = False
        ran_impacted = False
        ran: list[str] = []  # the test files the impacted stages ran whole
        skipped: list[str] = []  # those of the stages skipped: the full suite runs them first
        began_impacted = time.monotonic()
        if gate.impacted_first and changed is not None:
            covered, complete, traced = self._covered(base)
            progress.impacted = tuple(dict.fromkeys(f for f, _ in covered))
            # The tests that ran a changed line on the base commit, alone and first: those of
            # at most two test files, then the rest (see covered_first).
            parts = covered_first(covered)
            names = (":covered", ":covered-rest")
            for index, (name, part) in enumerate(zip(names, parts, strict=False)):
                if sum(map(len, parts[: index + 1])) >= traced:
                    progress.warm_notes.append(_skipped(gate.name + name, "test", traced))
                    skipped = list(dict.fromkeys(f for later in parts[index:] for f, _ in later))
                    break
                files = list(dict.fromkeys(f for f, _ in part))
                tests = [t for _, t in part]
                result = self._stage(gate, gate.name + name, files, files, progress, tests, base)
                ran_impacted = True
                if not result.passed:
                    progress.impacted_s = time.monotonic() - began_impacted
                    return
        if gate.impacted_first and changed is not None and not complete:
            try:
                nearest, wider, total = impacted_tiers(root, changed, measured)
            except (OSError, ValueError, RecursionError):
                nearest, wider, total = [], [], 0  # no impacted stage: the full suite decides
            progress.impacted = tuple(sorted({*progress.impacted, *nearest, *wider}))
            # Changed modules too: a project that collects doctest modules tests them there.
            sources = [c for c in changed if c.endswith(".py") and (root / c).is_file()]
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
            whole = {f for f in [*ran, *files] if f in progress.impacted}
            if total and len(whole) >= total:
                progress.warm_notes.append(_skipped(name, "test file", total))
                skipped += files
                continue
            result = self._stage(gate, name, files, files, progress, base=base)
            ran += files
            ran_impacted = True
            if not result.passed:
                progress.impacted_s = time.monotonic() - began_impacted
                return
        if ran_impacted:
            progress.impacted_s = time.monotonic() - began_impacted
        # The full suite decides; what has not passed yet runs first: a skipped impacted stage,
        # the wider ring, then the rest by measured time, the tests that already passed last.
        rest = sorted((f for f in measured if f not in ran), key=lambda f: (measured[f], f))
        wider_left = [f for f in wider if f not in ran]
        order = list(dict.fromkeys([*skipped, *wider_left, *rest, *nearest]))
        progress.full_stage(
            lambda: self._stage(gate, f"{gate.name}:full", None, order, progress, base=base)
        )

    def _stage(
        self,
        gate: TestsGate,
        name: str,
        files: list[str] | None,
        order: list[str],
        progress: SuiteProgress,
        tests: list[str] | None = None,
        base: str = "HEAD",
    ) -> GateResult:
        """One pytest run: the selected `files` (None: the whole suite), items in `order`; with
        `tests`, only those test ids of the files, in that order; pytest configured as at
        `base`."""
        # Under the gates' TMPDIR: inside a sandbox, the host's /tmp is not the command's.
        scratch = self.context.gate_env.get("TMPDIR") or None
        with tempfile.TemporaryDirectory(prefix="ssw-stage-", dir=scratch) as folder:
            durations = Path(folder) / "durations.json"
            absolute = [str(self.context.root / f) for f in order]
            record = Path(folder) / SESSION_FILE
            spec: dict[str, object] = {
                "files": absolute if files is not None else None,
                "order": absolute,
                "durations": str(durations),
                "session": str(record),
            }
            if tests is not None:
                spec["tests"] = tests
            outcomes = Path(folder) / OUTCOMES_FILE
            if files is None:  # the full stage: which tests it skipped (gates.skipped_tests)
                spec["outcomes"] = str(outcomes)
            notes: list[str] = []
            env = self.pytest_runs.stage_env(spec, Path(folder), base, notes)
            began = time.monotonic()
            # A selection that holds no test makes pytest exit 5: that is no failure here.
            selected = files is not None
            result, warm = self.pytest_runs.run(gate, name, selected, env, progress.warm_notes)
            one_pytest = self.pytest_runs.pytest_words(gate) is not None
            result = judged_by_session(result, record, required=one_pytest)
            ran = tests_ran(record)
            seconds = progress.test_stage_done(began)
            self.durations.learn(durations)
            if files is None and result.passed:
                progress.skipped = tuple(read_outcomes(outcomes)[1])
        if not result.passed and PLUGIN in result.log and "Error while loading" in result.log:
            raise HarnessError(
                f"gates: {name}: pytest could not load Stepswitch's {PLUGIN} plugin from "
                f"{PLUGIN_DIR} (does the gate command reset PYTHONPATH?)"
            )
        if notes:
            result = replace(result, log="".join(f"[ssw: {n}]\n" for n in notes) + result.log)
        failure = _FAILED_ID.search(result.log)
        progress.stage_finished(
            TestStage(
                name,
                len(files) if files is not None else None,
                seconds,
                result.passed,
                failure.group(1) if failure and not result.passed else None,
                len(tests) if tests is not None else None,
                warm,
                ran=ran,
            ),
            result,
        )
        return result

    def _covered(self, base: str) -> tuple[list[tuple[str, str]], bool, int]:
        """From the call map of `base`: the tests that ran a changed line, shortest first, each
        with its file; whether the map placed every change (then the import graph's stages
        add nothing); and how many tests the map traced (0: no map)."""
        context = self.context
        if context.base is None:
            return [], False, 0
        try:
            commit = context.base.commit(base)
        except BaseUnreadable:
            return [], False, 0
        found = self.tracer.call_map(commit)
        lines = changed_lines(context.tree, commit) if found is not None else None
        if found is None or lines is None:
            return [], False, 0
        tests, complete = found.covering(lines)
        placed: list[tuple[str, str]] = []
        for test in tests:
            path = found.test_file(test, context.root)
            if path is None or not path.is_relative_to(context.root):
                return [], False, 0  # recorded where its test ids mean other files
            placed.append((path.relative_to(context.root).as_posix(), test))
        return placed, complete, len(found.tests)

    def as_before(
        self, gate: TestsGate, base: str, skipped: Sequence[str] = ()
    ) -> GateResult | None:
        """The base commit's test files the change edited or deleted, run as the base commit has
        them against the changed code (gates/as_before.py), then the `skipped` tests (the full
        stage's skips and xfails) that ran at the base commit (gates/skipped_tests.py); None
        when there is nothing to run, or `test_changes = "allowed"`."""
        context = self.context
        if gate.test_changes == "allowed" or context.base is None or context.tree is None:
            return None
        edited = self._edited_as_before(gate, base)
        if edited is not None and not edited.passed:
            return edited
        try:
            commit = context.base.commit(base)
        except BaseUnreadable:
            return edited
        stopped = skipped_at_base_check(context, self.pytest_runs, gate, commit, skipped)
        return stopped or edited

    def _edited_as_before(self, gate: TestsGate, base: str) -> GateResult | None:
        context = self.context
        assert context.base is not None and context.tree is not None
        began = time.monotonic()
        try:
            commit = context.base.commit(base)
            changed = context.tree.changed_paths(commit)
            tests = changed_base_tests(context.base, commit, changed)
        except (BaseUnreadable, UsageError):
            return None  # the truth check says why
        if not tests:
            return None
        scratch = context.gate_env.get("TMPDIR")
        try:
            copy, root = lay_out_as_before(
                context.tree,
                context.base,
                commit,
                tests,
                Path(scratch) if scratch else None,
                conftests=changed_conftests(changed),
            )
        except UnsafePath as exc:
            why = f"{AS_BEFORE}: failed: the base commit's tests cannot be put back: {exc}"
            return GateResult(AS_BEFORE, False, time.monotonic() - began, why, why)
        try:
            folder = copy.parent / f"{copy.name}-stage"
            folder.mkdir()
            notes: list[str] = []
            # pytest configured as at the base commit, rooted in the copy (gates.test_config).
            record = folder / SESSION_FILE
            spec: dict[str, object] = {"files": None, "session": str(record)}
            env = self.pytest_runs.stage_env(spec, folder, commit, notes, root=root)
            there = gate_environment(root, context.env, context.interpreter, project_layout(root))
            env[DEFERRED_PATH] = there[DEFERRED_PATH]
            command = Gate(AS_BEFORE, gate.stage_command(tests), gate.timeout_s)
            ran = run_gate(command, root, env, context.confinement)
            one_pytest = self.pytest_runs.pytest_words(gate) is not None
            ran = judged_by_session(ran, record, required=one_pytest)
            ran = replace(ran, log="".join(f"[ssw: {n}]\n" for n in notes) + ran.log)
        finally:
            shutil.rmtree(copy, ignore_errors=True)
            shutil.rmtree(copy.parent / f"{copy.name}-stage", ignore_errors=True)
        shown = ", ".join(tests)
        if ran.passed:
            report = f"{AS_BEFORE}: passed: {shown}, as the base commit has them"
            return replace(ran, report=report, duration_s=time.monotonic() - began)
        conftests = changed_conftests(changed)
        which = "which the change edited or deleted" + (
            f", or which run under {', '.join(conftests)} the change added or edited"
            if conftests
            else ""
        )
        report = (
            f"{AS_BEFORE}: failed: {shown}, {which}, fail as the base commit has them: a test "
            "must still hold in its first form, under the base commit's conftest.py (a "
            'repository whose tasks change behaviour sets test_changes = "allowed" in its '
            "tests gate)\n" + gate_report(ran)
        )
        return replace(ran, report=report, duration_s=time.monotonic() - began)
