"""A bench task is a folder; `load_task` reads and checks it, `load_suite` reads a folder of them.

    bench/suites/<suite>/<task>/
      instruction.md     what the agent is told, written as a user would write it
      task.toml          this file's model: id, kind, the hidden test command, limits, gates
      repo/              the starting files: a small project with its own visible tests (Python;
                         or Node, Go: hidden tests then run their runner from pytest, ADR 0082),
                         or none (then the brief says hidden tests judge it)
      tests/             hidden tests; copied to `.ssw_hidden/` in a grading folder, never before
                         (with `overlay`, over the graded tree at their own paths)
      solution/*.patch   the reference change (`git diff` output), applied in name order

    id = "csv-quoting"                       # the folder's name; the suite is the parent folder
    kind = "bugfix"                          # bugfix | feature | refactor | numerical
    [tests]
    command = "python -m pytest -q .ssw_hidden"   # one pytest run, no shell; `python` is ssw's
    per_test_timeout_s = 30                  # default 30: CPU seconds; a test past it, or past four
                                             # times it in wall time, fails as timed out
    timeout_s = 300                          # default 300: the whole run, then its group is killed
    visible = "python -m pytest -q"          # default: the repo's own tests, as the repo runs them;
                                             # another runner (`node --test test/`) is judged by
                                             # its exit status alone
    start_hangs = true                       # default false: the bug is a hang, so the start's
                                             # hidden tests time out (validate accepts that only
                                             # when declared)
    failing_at_start = ["tests/test_x.py::test_y"]  # default none: visible tests the start fails
                                             # (the bug report), up to 10; the brief names them
    data = ["expected/*.json", "fixtures"]   # default none: files of repo/ the hidden tests read;
                                             # grading puts the start's back (a folder: its files)
    overlay = true                           # default false: tests/ lies over the tree at its own
                                             # paths (a SWE-bench test patch's files), not in
                                             # .ssw_hidden/, read-only while the tests run
    fail_to_pass = ["pkg/tests/test_x.py::test_y"]  # default none: the hidden run is graded by
    pass_to_pass = ["pkg/tests/test_x.py::test_z"]  # exactly these ids, every one must pass (a
                                             # skip or an id not collected fails); validate holds
                                             # the start to failing each fail_to_pass, passing
                                             # each pass_to_pass
    [limits]
    task_timeout_s = 1800                    # default 1800: the agent's wall time for a run
    requires = ["numpy==2.1.3"]              # default none: packages the tests import, as
                                             # `name` or `name==version`; validate refuses a task
                                             # whose requirement ssw's interpreter lacks
    requires_tools = ["node"]                # default none: commands the tests run (another
                                             # language's toolchain); without one on PATH the
                                             # task is not judged (validate skips it, said)
    # [gates.<name>] optional, as in .stepswitch.toml; without it the repo's own gates are used

Every problem is a ConfigError naming the file and the key. docs/decisions/0011-task-format.md
says why the layout is Harbor's and what grading does with it.
"""

from __future__ import annotations

import os
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from stepswitch.bench.pytest_ids import has_tests, junit_name, runs_pytest
from stepswitch.bench.task_data import _data_globs, _files_of, covers
from stepswitch.errors import ConfigError
from stepswitch.gates.config import OWN_FILE, GateConfig, _parse_gates, read_gate_config
from stepswitch.util.config_model import Strict, validate
from stepswitch.util.inputs import read_text_input
from stepswitch.util.toml import parse_toml

TASK_FILE = "task.toml"
INSTRUCTION = "instruction.md"
HIDDEN_FOLDER = ".ssw_hidden"  # where a grading folder gets the hidden tests
DOCS = "docs/decisions/0011-task-format.md"
KINDS = ("bugfix", "feature", "refactor", "numerical")

Seconds = Annotated[float, Field(gt=0, strict=True)]
Text = Annotated[str, Field(min_length=1, strict=True)]
Name = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", strict=True)]
Requirement = Annotated[
    str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*(==[A-Za-z0-9.+!_-]+)?$", strict=True)
]
Tool = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$", strict=True)]  # a command's name
NodeId = Annotated[str, Field(pattern=r"^[^\s:][^\s]*\.py::\S+$", strict=True)]
# A graded id as pytest names it (SWE-bench's FAIL_TO_PASS): a parameter may hold spaces.
GRADED_ID = r"^[^\s:][^\s]*\.py::\S.*$"
GradedId = Annotated[str, Field(pattern=GRADED_ID, strict=True)]
MAX_FAILING = 10  # as many failing test ids as a verdict keeps (verdict.TestVerdict)


class TestsSpec(Strict):
    __test__ = False  # not a pytest test class

    command: Text  # pytest over the hidden tests; the grader appends its own options
    per_test_timeout_s: Seconds = 30.0
    timeout_s: Seconds = 300.0
    visible: Text = "python -m pytest -q -p no:cacheprovider"
    data: tuple[Text, ...] = ()  # globs relative to repo/: the test data grading puts back
    # pytest node ids of visible tests the start fails and the reference passes (validate checks
    # both); the agent's brief names them, as a bug report shows the failing test.
    failing_at_start: Annotated[tuple[NodeId, ...], Field(max_length=MAX_FAILING)] = ()
    # The hidden tests lie over the graded tree at their own paths instead of in .ssw_hidden/.
    overlay: bool = False
    # When given, the hidden run is graded by exactly these pytest ids (grading_select.py).
    fail_to_pass: tuple[GradedId, ...] = ()
    pass_to_pass: tuple[GradedId, ...] = ()
    # The bug is a hang: the start's hidden tests pass their time limits (validate accepts that
    # as failing, and only when declared; a run graded so fails, as any timed-out run does).
    start_hangs: bool = Field(default=False, strict=True)


class Limits(Strict):
    task_timeout_s: Seconds = 1800.0


class TaskSpec(Strict):
    """task.toml as written."""

    schema_version: Literal[1] = 1
    id: Name
    kind: Literal["bugfix", "feature", "refactor", "numerical"]
    tests: TestsSpec
    limits: Limits = Limits()
    # Packages the task's code and tests import beyond the standard library and pytest; tasks run
    # on ssw's interpreter, which must have them (validate checks; nothing is installed).
    requires: tuple[Requirement, ...] = ()
    # Commands the tests run beyond python (`node`, `go`, `cargo`): the hidden tests of a task in
    # another language are a pytest file running that language's own runner (ADR 0082).
    requires_tools: tuple[Tool, ...] = ()
    gates: dict[str, Any] | None = None  # checked by stepswitch.gates.config


@dataclass(frozen=True)
class Task:
    suite: str
    folder: Path
    spec: TaskSpec
    instruction: str
    gates: GateConfig | None  # None: the repository's own (or detected) gates

    @property
    def name(self) -> str:
        """`suite/id`, as results and reports name the task."""
        return f"{self.suite}/{self.spec.id}"

    @property
    def repo(self) -> Path:
        return self.folder / "repo"

    @property
    def hidden_tests(self) -> Path:
        return self.folder / "tests"

    @property
    def patches(self) -> tuple[Path, ...]:
        return tuple(sorted((self.folder / "solution").glob("*.patch")))

    @property
    def data_files(self) -> tuple[str, ...]:
        """The start's files that `[tests] data` declares, relative to repo/, in order."""
        if not self.spec.tests.data:
            return ()
        return tuple(rel for rel in _files_of(self.repo) if covers(self.spec.tests.data, rel))

    @cached_property
    def visible_tests(self) -> bool:
        """Whether the start holds tests of its own; without, the hidden tests alone judge it.
        Another language's runner (`[tests] visible` not pytest) runs the start's own tests."""
        return not self.visible_is_pytest or has_tests(self.repo)

    @property
    def graded_ids(self) -> tuple[str, ...]:
        """The pytest ids the hidden run is graded by (none: every test it runs)."""
        return self.spec.tests.fail_to_pass + self.spec.tests.pass_to_pass

    @property
    def brief(self) -> str:
        """What the agent is told: the instruction, the visible tests the start fails, and that
        hidden tests judge it when the start has none of its own."""
        return brief_of(self.instruction, self.spec.tests.failing_at_start, not self.visible_tests)

    @property
    def failing_at_start(self) -> frozenset[str]:
        """The declared failing tests as a JUnit report names them (`tests.test_x::test_y`)."""
        return frozenset(junit_name(node) for node in self.spec.tests.failing_at_start)

    @property
    def command(self) -> list[str]:
        return shlex.split(self.spec.tests.command)

    @property
    def visible_command(self) -> list[str]:
        return shlex.split(self.spec.tests.visible)

    @property
    def visible_is_pytest(self) -> bool:
        """Whether the visible command runs pytest (else its exit status alone is its verdict)."""
        return runs_pytest(self.visible_command)


HIDDEN_ONLY_NOTE = (
    "The repository has no tests of its own: the task is judged by tests you cannot see, run "
    "once you are done.\n"
)


def brief_of(instruction: str, failing_at_start: Sequence[str], hidden_only: bool = False) -> str:
    """The instruction, then the visible tests the start fails, if any, or that tests the agent
    cannot see judge a start without tests of its own (Task.brief)."""
    if hidden_only:
        return f"{instruction.rstrip()}\n\n{HIDDEN_ONLY_NOTE}"
    if not failing_at_start:
        return instruction
    listed = "\n".join(f"- {node}" for node in failing_at_start)
    return (
        f"{instruction.rstrip()}\n\nThese tests of the repository fail now, and pass once the "
        f"task is done:\n{listed}\n"
    )


# -- reading ------------------------------------------------------------------------------------


def _text(path: Path, what: str) -> str:
    """A UTF-8 text file, or a ConfigError saying why it is not one: the one input reader's
    (a FIFO or a device refused, never waited on; the size bounded; binary or not UTF-8 named)."""
    if not os.path.lexists(path):
        raise ConfigError(str(path), "(file)", "missing", f"add {what} (see {DOCS})")
    return read_text_input(path, what, f"make {what} a regular text file (see {DOCS})")


def _key_of(loc: tuple[int | str, ...]) -> str:
    key = ""
    for part in loc:
        key += f"[{part}]" if isinstance(part, int) else f".{part}"
    return key.lstrip(".") or "(top level)"


def _fix_for(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return f"remove it; the keys are in {DOCS}"
    key = _key_of(tuple(error["loc"]))
    hints = {
        "id": "the task folder's name: lower case letters, digits, '-' and '_'",
        "kind": "one of: " + ", ".join(KINDS),
        "tests": 'a [tests] table with command = "python -m pytest -q .ssw_hidden"',
        "tests.command": 'e.g. command = "python -m pytest -q .ssw_hidden"',
        "tests.data": 'a list of globs relative to repo/, e.g. data = ["expected/*.json"]',
        "schema_version": "1",
        "requires": 'e.g. requires = ["numpy==2.1.3"]: a name, or name==version',
        "requires_tools": 'e.g. requires_tools = ["node"]: command names',
    }
    return hints.get(key, "seconds above 0" if key.endswith("timeout_s") else f"see {DOCS}")


def _problem_of(error: Any) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    if error["type"] == "missing":
        return "missing"
    return str(error["msg"])


def _split(file: str, key: str, command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(file, key, f"cannot split: {exc}", "fix the quoting") from exc
    if not argv:
        raise ConfigError(file, key, "empty", 'e.g. "python -m pytest -q .ssw_hidden"')
    return argv


def _pytest_argv(file: str, key: str, command: str) -> None:
    if not runs_pytest(_split(file, key, command)):
        raise ConfigError(
            file,
            key,
            "must run pytest: the verdict is read from its JUnit report",
            'e.g. "python -m pytest -q .ssw_hidden"',
        )


def _folder(task: Path, name: str, fix: str) -> Path:
    path = task / name
    if not path.is_dir():
        raise ConfigError(str(path), "(folder)", "missing", fix)
    if not any(path.iterdir()):
        raise ConfigError(str(path), "(folder)", "empty", fix)
    return path


def _repo_gates(repo: Path) -> GateConfig | None:
    try:
        return read_gate_config(repo)
    except ConfigError as exc:
        detail = str(exc).removeprefix(f"{exc.file}: {exc.key}: ")
        raise ConfigError(str(repo / exc.file), exc.key, detail) from exc


def load_task(folder: Path, suite: str | None = None) -> Task:
    """Read and check one task folder (the suite is its parent's name unless given)."""
    file = str(folder / TASK_FILE)
    if not folder.is_dir():
        raise ConfigError(str(folder), "(folder)", "no such task folder", "check the path")
    try:
        data = parse_toml(_text(folder / TASK_FILE, TASK_FILE))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, "(syntax)", str(exc), "fix the TOML syntax") from exc
    spec = validate(
        TaskSpec,
        data,
        file,
        key=lambda error: _key_of(tuple(error["loc"])),
        problem=_problem_of,
        fix=_fix_for,
    )
    if spec.id != folder.name:
        raise ConfigError(
            file, "id", f"{spec.id!r} is not the folder's name", f'id = "{folder.name}"'
        )
    _pytest_argv(file, "tests.command", spec.tests.command)
    if spec.tests.failing_at_start:  # named by pytest node ids, read from its JUnit report
        _pytest_argv(file, "tests.visible", spec.tests.visible)
    _split(file, "tests.visible", spec.tests.visible)

    instruction = _text(folder / INSTRUCTION, INSTRUCTION)
    if not instruction.strip():
        raise ConfigError(
            str(folder / INSTRUCTION), "(file)", "empty", "write what the agent is asked to do"
        )
    repo = _folder(folder, "repo", "add the starting files of the project under repo/")
    hidden = _folder(folder, "tests", "add the hidden tests under tests/")
    if not any(hidden.rglob("test_*.py")) and not any(hidden.rglob("*_test.py")):
        raise ConfigError(str(hidden), "(folder)", "no test_*.py file", "add the hidden tests")
    solution = folder / "solution"
    patches = sorted(solution.glob("*.patch")) if solution.is_dir() else []
    if not patches:
        raise ConfigError(
            str(solution / "solution.patch"),
            "(file)",
            "missing: the reference change",
            "write it with `git diff > solution/solution.patch` in a copy of repo/",
        )
    for patch in patches:
        if not _text(patch, "the reference change").strip():
            raise ConfigError(str(patch), "(file)", "empty", "write the reference change")

    _data_globs(file, folder, spec.tests.data)
    if spec.tests.failing_at_start and not has_tests(repo):
        raise ConfigError(
            file, "tests.failing_at_start", "repo/ holds no test of its own", "remove the key"
        )
    if spec.tests.pass_to_pass and not spec.tests.fail_to_pass:
        raise ConfigError(
            file,
            "tests.pass_to_pass",
            "given without fail_to_pass",
            "name the tests the change must make pass in fail_to_pass",
        )

    own = _repo_gates(repo)
    gates = None
    if spec.gates is not None:
        if own is not None:
            raise ConfigError(
                file, "gates", f"repo/ configures gates too ({own.source})", "keep one of them"
            )
        # The bench runner writes these to the copy's .stepswitch.toml before its base commit.
        parsed = _parse_gates(spec.gates, file, "gates", repo)
        gates = GateConfig(parsed, f"{TASK_FILE} [gates]", OWN_FILE)
    return Task(suite or folder.parent.name, folder, spec, instruction, gates)


def load_suite(folder: Path) -> list[Task]:
    """Every task folder in a suite folder, by name; a folder holding task.toml is one task."""
    if (folder / TASK_FILE).is_file():
        return [load_task(folder)]
    if not folder.is_dir():
        raise ConfigError(str(folder), "(folder)", "no such suite folder", "check the path")
    tasks = [
        load_task(child, folder.name)
        for child in sorted(folder.iterdir())
        if child.is_dir() and not child.name.startswith((".", "_"))
    ]
    if not tasks:
        raise ConfigError(str(folder), "(folder)", "no task folders", f"see {DOCS}")
    return tasks
