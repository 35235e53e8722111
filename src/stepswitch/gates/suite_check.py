"""The suite gate (`kind = "suite"`): a test suite in another language, run by its runner
(`gates/lang/`, found by the gate's `runner`), in at most two stages like the tests gate's.

After an edit the runner narrows to what the change can reach (`Runner.impacted`: Jest's related
tests, the node test files whose imports reach a changed module...) and that stage runs first,
`<gate>:impacted`; the full suite, `<gate>:full`, runs when it passes, or alone when nothing
narrower is sound, and each stage says which and why (`TestStage.why`). Each stage's command
writes its runner's report (JUnit XML, JSON...) into a scratch folder outside the worktree, and
the failing tests read from it are what the model sees (`failed_tests_lines`, at most
REPORT_CHARS); without a readable report the output's first lines are.

A suite that already failed before any edit (the pre-flight keeps its failing test ids,
`gates.known_failures`) is judged by the failing tests the change adds.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from stepswitch.gates.config import SuiteGate
from stepswitch.gates.context import ConfiguredCheck
from stepswitch.gates.known_failures import KnownFailures
from stepswitch.gates.lang.base import (
    CountsTests,
    FailedTest,
    Runner,
    Selection,
    failed_tests_lines,
    relative_failures,
)
from stepswitch.gates.lang.registry import runner
from stepswitch.gates.progress import SuiteProgress, TestStage
from stepswitch.gates.report import fit_lines
from stepswitch.gates.runner import REPORT_CHARS, GateResult

FULL_WHY = "the full suite"


@dataclass(frozen=True)
class StageRun:
    """One stage's verdict, and what its report said."""

    result: GateResult
    failed: list[FailedTest]
    tests: int | None  # the tests the report says ran; None when it cannot say


@dataclass(frozen=True)
class SuiteCheck(ConfiguredCheck[SuiteGate]):
    known: KnownFailures | None = None  # its failing tests before any edit, when it failed then

    @property
    def runner(self) -> Runner:
        return runner(self.gate.runner)

    @contextmanager
    def _scratch(self) -> Iterator[Path]:
        # Under the gates' TMPDIR: inside a sandbox, the host's /tmp is not the command's.
        scratch = self.context.gate_env.get("TMPDIR") or None
        with tempfile.TemporaryDirectory(prefix="ssw-suite-", dir=scratch) as folder:
            yield Path(folder)

    def check(self, base: str) -> GateResult:
        """The full suite alone, once (the pre-flight's run); `base` plays no part."""
        with self._scratch() as folder:
            report = folder / "report"
            command = self.runner.full_command(self.gate.command, report)
            return self._stage(self.gate.name, command, report).result

    def run(self, changed: list[str] | None, progress: SuiteProgress) -> None:
        """The stages for a change to `changed` (None: unknown, so only the full suite), each
        recorded in `progress`."""
        gate, found = self.gate, self.runner
        full_why = FULL_WHY
        with self._scratch() as folder:
            began = time.monotonic()
            if gate.impacted_first and changed is not None:
                report = folder / "impacted-report"
                selection = found.impacted(self.context.root, gate.command, changed, report)
                if selection.command is None:
                    full_why = selection.why
                else:
                    progress.impacted = selection.tests
                    name = f"{gate.name}:impacted"
                    ran = self._recorded(name, selection.command, report, progress, selection)
                    progress.impacted_s = time.monotonic() - began
                    if not ran.passed:
                        return
            report = folder / "full-report"
            command = found.full_command(gate.command, report)
            progress.full_stage(
                lambda: self._recorded(
                    f"{gate.name}:full", command, report, progress, None, full_why
                )
            )

    def _recorded(
        self,
        name: str,
        command: str,
        report: Path,
        progress: SuiteProgress,
        selection: Selection | None,
        why: str = "",
    ) -> GateResult:
        began = time.monotonic()
        stage = self._stage(name, command, report)
        seconds = progress.test_stage_done(began)
        result = stage.result
        files = len(selection.tests) if selection is not None else None
        why = selection.why if selection is not None else why
        first = stage.failed[0].test_id if stage.failed and not result.passed else None
        progress.stage_finished(
            TestStage(
                name,
                files,
                seconds,
                result.passed,
                first,
                stage.tests,
                why=why,
            ),
            result,
        )
        return result

    def _stage(self, name: str, command: str, report: Path) -> StageRun:
        """One run of `command`, its report read into the failing tests and judged against the
        start's failures when the suite already failed then."""
        gate, found = self.gate, self.runner
        result = self.context.command(name, command, gate.timeout_s)
        failed = relative_failures(found.failures(result.log, report), self.context.root)
        tests = found.tests_run(report) if isinstance(found, CountsTests) else None
        ids = tuple(test.test_id for test in failed)
        result = replace(result, failed_tests=ids)
        if result.passed:
            return StageRun(result, failed, tests)
        head = result.report.splitlines()[0] if result.report else name
        shown = failed
        if self.known is not None and (added := self.known.added(failed)) is not None:
            if not added:
                passed = replace(result, passed=True, report=self.known.passed_line(name, len(ids)))
                return StageRun(passed, [], tests)
            head, shown = self.known.added_line(head, len(added)), added
        if shown:
            lines = [head, *failed_tests_lines(shown)]
            result = replace(result, report=fit_lines(lines, REPORT_CHARS))
        return StageRun(result, shown, tests)
