"""Node and TypeScript: the detection (`node_detect`) and the four runners a suite gate names.

- NODE_TEST, node's own `--test`: its report comes from Stepswitch's reporter module
  (`node_reporter.mjs`, given through NODE_OPTIONS, so the project's script runs unchanged);
  impacted-first runs `node --test` on the test files whose import graph reaches a changed file
  (`node_graph`), with the script's own options.
- JEST: `--json --outputFile`; impacted-first through the project's script with
  `--findRelatedTests`.
- VITEST: `--reporter=json --outputFile.json`; impacted-first `vitest related --run`.
- MOCHA: the `json` reporter; impacted-first by the same import graph as node's.

Each runs through the project's package manager or its node_modules/.bin; nothing is installed.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from stepswitch.gates.lang.base import FailedTest, Selection
from stepswitch.gates.lang.node_detect import NODE, detect
from stepswitch.gates.lang.node_graph import (
    SOURCE_SUFFIXES,
    Unsound,
    reaching,
    test_files,
    walk,
)
from stepswitch.gates.lang.node_project import (
    ManifestUnreadable,
    NodeProject,
    is_compound,
    with_args,
    words,
)
from stepswitch.gates.lang.node_reports import (
    jest_count,
    jest_failures,
    mocha_count,
    mocha_failures,
    node_test_count,
    node_test_failures,
)

__all__ = ["JEST", "MOCHA", "NODE_TEST", "VITEST", "detect"]

REPORTER = Path(__file__).resolve().with_name("node_reporter.mjs")
# node's options that take the next word as their value (`--import tsx`).
_VALUE_OPTIONS = frozenset(
    {"--import", "--require", "-r", "--loader", "--experimental-loader", "--env-file"}
    | {"--test-name-pattern", "--test-reporter", "--test-reporter-destination"}
    | {"--test-concurrency", "--test-timeout", "--conditions", "-C", "--test-shard"}
)
_MOCHA_VALUE_OPTIONS = frozenset(
    {"--require", "-r", "--timeout", "-t", "--reporter", "-R", "--grep", "-g", "--ui", "-u"}
    | {"--extension", "--ignore", "--file", "--slow", "-s", "--config", "--package"}
    | {"--reporter-option", "--reporter-options", "-O", "--retries", "--jobs", "-j"}
)
_MOCHA_CONFIGS: tuple[str, ...] = (".mocharc.js", ".mocharc.cjs", ".mocharc.json")
_MOCHA_CONFIGS += (".mocharc.jsonc", ".mocharc.yml", ".mocharc.yaml")


def _quoted_option(option: str, value: str) -> str:
    """`--option=value` as NODE_OPTIONS reads it (double quotes around a value with spaces)."""
    return f'{option}="{value}"' if " " in value else f"{option}={value}"


def node_options(report: Path) -> str:
    """The NODE_OPTIONS assignment that adds Stepswitch's reporter (to `report`) beside node's
    own spec reporter (to the output), keeping the options the environment has."""
    options = " ".join(
        [
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
            _quoted_option("--test-reporter", REPORTER.as_uri()),
            _quoted_option("--test-reporter-destination", str(report)),
        ]
    )
    return f'NODE_OPTIONS="${{NODE_OPTIONS:-}}"{shlex.quote(" " + options)}'


def _project(root: Path) -> NodeProject | None:
    try:
        return NodeProject.read(root)
    except ManifestUnreadable:
        return None


def _bin(root: Path, tool: str) -> str | None:
    project = _project(root)
    return project.bin(tool) if project is not None else None


def _script_words(root: Path, command: str) -> tuple[list[str] | None, str]:
    """The words of what `command` runs (the package.json script it names, or itself), and how
    it is named for the lines a user reads; None when that is more than one simple command."""
    project = _project(root)
    script = project.script_of(command) if project is not None else None
    text = script if script is not None else command
    return words(text), f"`{text}`"


def _split(found: list[str], value_options: frozenset[str]) -> tuple[list[str], list[str]]:
    """A command's options (with the values they take) and its positional words."""
    options: list[str] = []
    positional: list[str] = []
    index = 0
    while index < len(found):
        word = found[index]
        if word.startswith("-"):
            options.append(word)
            if word in value_options and index + 1 < len(found):
                options.append(found[index + 1])
                index += 1
        else:
            positional.append(word)
        index += 1
    return options, positional


def _changed_sources(root: Path, changed: Sequence[str]) -> list[str]:
    return [c for c in changed if Path(c).suffix in SOURCE_SUFFIXES and (root / c).is_file()]


def _by_graph(root: Path, tests: list[str], changed: Sequence[str]) -> tuple[list[str], str]:
    """The test files whose imports reach `changed` (none when that is every one: the impacted
    stage would be the full suite twice), and the stage line's why. Raises Unsound."""
    selected = reaching(root, tests, changed)
    if not selected:
        return [], "no test file imports a changed file"
    if len(selected) == len(tests):
        return [], "every test file imports a changed file"
    plural = "s" if len(selected) != 1 else ""
    return selected, f"{len(selected)} test file{plural} of {len(tests)} import a changed file"


def _full_only(why: str) -> Selection:
    return Selection(None, (), f"{why}: the full suite only")


class NodeTestRunner:
    """node's own test runner (`node --test`)."""

    name = "node-test"
    language = NODE

    def full_command(self, command: str, report: Path) -> str:
        return f"{node_options(report)} {command}"

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        found, shown = _script_words(root, command)
        if found is None or not found or Path(found[0]).name != "node" or "--test" not in found:
            return _full_only(f"the test script {shown} is more than `node --test` and its files")
        options, paths = _split(found[1:], _VALUE_OPTIONS)
        try:
            tests = test_files(root, paths)
            selected, why = _by_graph(root, tests, changed)
        except Unsound as exc:
            return _full_only(str(exc))
        if not selected:
            return _full_only(why)
        argv = shlex.join(["node", *options, *selected])
        return Selection(f"{node_options(report)} {argv}", tuple(selected), why)

    def failures(self, output: str, report: Path) -> list[FailedTest]:
        return node_test_failures(report)

    def tests_run(self, report: Path) -> int | None:
        return node_test_count(report)


class _ReportingRunner:
    """A runner whose report comes from options added to the project's own command."""

    language = NODE
    reporter = ""  # the options that make it write its report; {report} is the report's path

    def _reporter(self, report: Path) -> str:
        return self.reporter.format(report=shlex.quote(str(report)))

    def full_command(self, command: str, report: Path) -> str:
        return with_args(command, self._reporter(report))


class JestRunner(_ReportingRunner):
    name = "jest"
    reporter = "--json --outputFile={report}"

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        if is_compound(command):
            return _full_only(f"the command `{command}` is more than one program")
        sources = _changed_sources(root, changed)
        if not sources:
            return _full_only("no changed JavaScript or TypeScript file")
        args = f"{self._reporter(report)} --findRelatedTests {shlex.join(sources)}"
        why = f"jest --findRelatedTests {' '.join(sources)}"
        return Selection(with_args(command, args), tuple(sources), why)

    def failures(self, output: str, report: Path) -> list[FailedTest]:
        return jest_failures(report)

    def tests_run(self, report: Path) -> int | None:
        return jest_count(report)


class VitestRunner(JestRunner):
    """Vitest writes Jest's JSON report: its failures and counts are read as Jest's."""

    name = "vitest"
    reporter = "--reporter=default --reporter=json --outputFile.json={report}"

    def full_command(self, command: str, report: Path) -> str:
        # CI: vitest runs once (never watches), and writes no snapshot it did not find.
        return f"CI=true {with_args(command, self._reporter(report))}"

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        binary = _bin(root, "vitest")
        if binary is None:
            return _full_only("node_modules/.bin has no vitest to run `vitest related` with")
        sources = _changed_sources(root, changed)
        if not sources:
            return _full_only("no changed JavaScript or TypeScript file")
        related = f"{shlex.quote(binary)} related --run {self._reporter(report)}"
        command = f"CI=true {related} {shlex.join(sources)}"
        return Selection(command, tuple(sources), f"vitest related {' '.join(sources)}")


class MochaRunner(_ReportingRunner):
    name = "mocha"
    reporter = "--reporter json --reporter-option output={report}"

    def impacted(self, root: Path, command: str, changed: Sequence[str], report: Path) -> Selection:
        found, shown = _script_words(root, command)
        if found is None or not found or Path(found[0]).name != "mocha":
            return _full_only(f"the test script {shown} is more than `mocha` and its files")
        config = next((c for c in _MOCHA_CONFIGS if (root / c).is_file()), None)
        if config is not None:
            return _full_only(f"{config} may name the test files")
        options, paths = _split(found[1:], _MOCHA_VALUE_OPTIONS)
        recursive = "--recursive" in options
        try:
            if paths:
                tests = test_files(root, paths, recursive)
            else:  # mocha's default: ./test/*.{js,cjs,mjs}
                folder = root / "test"
                found_files = walk(root, folder, recursive) if folder.is_dir() else []
                tests = [f for f in found_files if Path(f).suffix in (".js", ".cjs", ".mjs")]
            selected, why = _by_graph(root, tests, changed)
        except Unsound as exc:
            return _full_only(str(exc))
        if not selected:
            return _full_only(why)
        binary = _bin(root, "mocha")
        if binary is None:
            return _full_only("node_modules/.bin has no mocha to run the selected files with")
        argv = shlex.join([binary, *options, *selected])
        return Selection(f"{argv} {self._reporter(report)}", tuple(selected), why)

    def failures(self, output: str, report: Path) -> list[FailedTest]:
        return mocha_failures(report, output)

    def tests_run(self, report: Path) -> int | None:
        return mocha_count(report)


NODE_TEST = NodeTestRunner()
JEST = JestRunner()
VITEST = VitestRunner()
MOCHA = MochaRunner()
