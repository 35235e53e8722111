"""What every language's test runner gives the gates (`SuiteGate`, `gates/lang/`).

A runner turns the project's own test command into the full-suite command with a machine-readable
report, narrows it to the tests a change can reach where its ecosystem makes that sound (never
guessed: `Selection.command is None` says why not), and reads its report into `FailedTest`s, the
same list the Python gates give the model: the test's id, its file, the assertion's message.
Detection reads only what the repository declares at the base commit (never what the agent wrote).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from stepswitch.gates.config import GateSpec

MESSAGE_CHARS = 600  # of one failing test's message, as the model sees it
MAX_FAILED_SHOWN = 20  # failing tests named in a report; the rest counted


@dataclass(frozen=True)
class FailedTest:
    """One failing test as its runner names it."""

    test_id: str  # "test/math.test.js > adds", "tests::adds_two", "TestAdd", "pkg/sub.TestAdd"
    file: str | None  # relative to the repository root, when the runner says
    message: str  # the assertion's first lines, at most MESSAGE_CHARS


@dataclass(frozen=True)
class Detected:
    """A gate detection chose, and why (shown where the gates are listed)."""

    spec: GateSpec
    reason: str  # "package.json scripts.test runs node --test", "Cargo.toml: a crate"


@dataclass(frozen=True)
class Detection:
    """What one language's detection found in a repository."""

    language: str  # "Node", "TypeScript", "Rust", "Go", "Make"
    gates: tuple[Detected, ...] = ()
    notes: tuple[str, ...] = ()  # what it left out and why (a tool declared but not installed)


@dataclass(frozen=True)
class Selection:
    """The narrower run impacted-first chose, or why there is none."""

    command: str | None  # None: nothing narrower is sound; the full suite runs alone
    tests: tuple[str, ...]  # what it selected: test files, packages, crates
    why: str  # "2 test files import src/math.js", "go list: 1 package depends on ./calc"


class Runner(Protocol):
    """One test runner. `report` is a file path inside the workspace's scratch folder that the
    command may write its report to (JUnit XML, TAP, JSON); `output` is the command's own."""

    name: str  # as SuiteGate.runner names it
    language: str  # for the lines a user reads

    def full_command(self, command: str, report: Path) -> str:
        """The project's full-suite command with the reporter this runner reads."""
        ...

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        """The tests `changed` (paths relative to `root`) can reach, as one command."""
        ...

    def failures(self, output: str, report: Path) -> list[FailedTest]:
        """The failing tests, from the report when there is one, else from the output."""
        ...


@runtime_checkable
class CountsTests(Protocol):
    """A runner that can also say how many tests a run's report holds (optional: the stage
    lines then say "ran 3 tests"; without it they name what was selected)."""

    def tests_run(self, report: Path) -> int | None:
        """The tests the report says ran (passed, failed or skipped); None when unreadable."""
        ...


def relative_failures(failed: Sequence[FailedTest], root: Path) -> list[FailedTest]:
    """`failed` with the absolute paths a runner's report gives (its file, in its id and its
    message) made relative to `root`, as the model and the user know the files."""
    folders = dict.fromkeys((str(root), str(root.resolve())))
    prefixes = [f"file://{folder}/" for folder in folders] + [f"{folder}/" for folder in folders]
    out: list[FailedTest] = []
    for test in failed:
        test_id, file, message = test.test_id, test.file, test.message
        for prefix in prefixes:
            test_id = test_id.replace(prefix, "")
            message = message.replace(prefix, "")
            if file is not None and file.startswith(prefix):
                file = file.removeprefix(prefix)
        out.append(FailedTest(test_id, file, message))
    return out


def failed_tests_lines(failed: Sequence[FailedTest]) -> list[str]:
    """The model's view of failing tests: `FAILED id (file)` and the message indented, at most
    MAX_FAILED_SHOWN of them; gates.report fits them to the report's size."""
    lines: list[str] = []
    for test in failed[:MAX_FAILED_SHOWN]:
        where = f" ({test.file})" if test.file else ""
        lines.append(f"FAILED {test.test_id}{where}")
        message = test.message[:MESSAGE_CHARS]
        lines += [f"    {line}" for line in message.splitlines() if line.strip()]
    if len(failed) > MAX_FAILED_SHOWN:
        lines.append(f"... and {len(failed) - MAX_FAILED_SHOWN} more failing tests")
    return lines
