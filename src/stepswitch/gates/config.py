"""Gate configuration of the target repository, and the gates detected when it has none.

The gates live in `pyproject.toml` under `[tool.stepswitch.gates]`, or in `.stepswitch.toml` under
`[gates]` (never both). Each gate is one table named after the gate; `kind` says what it is
(default "command"). Gates run in the order the file lists them and the first failure stops the
rest, so put the cheap ones first:

    [tool.stepswitch.gates.format]           # kind = "command" is the default
    command = "ruff format --check ."
    timeout_s = 60                           # default 600
    globs = ["*.py", "pyproject.toml"]       # run only when a changed file matches; default: always
                                             # (a glob without "/" matches file names anywhere)

    [tool.stepswitch.gates.tests]
    kind = "tests"                           # pytest in two stages: impacted tests, then all
    command = "python -m pytest -q -x"       # default: the repository's python -m pytest -q -x;
                                             # "{tests}" marks where the impacted files go,
                                             # otherwise they are appended
    impacted_first = true                    # default true
    call_map = true                          # default true: the pre-flight traces the suite
                                             # once so the tests that ran a changed line go first
    timeout_s = 1200

    [tool.stepswitch.gates.unit]
    kind = "suite"                           # a test suite in another language (gates/lang/)
    runner = "vitest"                        # node-test, jest, vitest, mocha, cargo, go, make
    command = "npm test"                     # the full suite, as the project runs it; the
                                             # runner adds its reporter and reads the failing
                                             # tests from it
    impacted_first = true                    # default true: what the runner narrows to first
                                             # (vitest related, the node test files whose
                                             # imports reach the change...), then the full suite
    timeout_s = 1800                         # default 1800

    [tool.stepswitch.gates.energies]
    kind = "golden"                          # numbers compared with a committed file
    expected = "tests/golden/energies.json"  # JSON or CSV (by suffix, or `format`)
    command = "python -m model.run --json"   # prints the actual values on standard output
    # actual = "out/energies.json"           # ...or writes them to this file
    rtol = 1e-6                              # default 1e-5
    atol = 1e-12                             # default 1e-8

    [tool.stepswitch.gates.constants]
    kind = "protected"
    paths = ["data/reference/**"]            # files the agent may not write at all
    constants = { "src/model/constants.py" = ["G", "C"] }   # values an edit must not change;
                                             # ["*"]: every UPPER_CASE name at module level

In `.stepswitch.toml` the same tables are `[gates.format]`, `[gates.tests]` and so on. An empty
`[tool.stepswitch.gates]` table means "no gates". Every problem is a ConfigError naming the file
and the key, e.g. `pyproject.toml: tool.stepswitch.gates.lint.timeout_s: ...`.

The gates' truth is the base commit. A run reads this configuration from its fresh worktree,
before any edit; the golden gate's expected values and the protected constants' old values are
read from the base commit's objects, never from the worktree (`gates.base`). The configuration
file, `.stepswitch.toml`, the golden files and the protected paths (`gates.truth_paths`) are
what the agent's tools refuse to write, and any change to them in the worktree, by any means, is
a failing verdict of the `ssw:protected` check that runs before the gates (`gates.tree_diff`).
A protected path or constant that is not in the base commit, a golden file that is not there or
does not parse, a command that is not found and a gate that times out on the untouched tree are
refused before the first paid call (`gates.preflight`), one line, exit 2.

Without configuration a Python repository gets detected gates, cheapest first: `ruff format
--check` and `ruff check` when the repository configures ruff (`[tool.ruff]`, `ruff.toml`,
`.ruff.toml`), `mypy` when it configures mypy (`[tool.mypy]`, `mypy.ini`, `.mypy.ini`, `[mypy]` in
`setup.cfg`), and pytest in two stages when it has test files. A tool the repository configures
but that is not installed is never a silent skip: `ssw run` refuses before any call, saying
"command not found", and `ssw gates` shows a failing gate saying so.

Other languages are detected after Python (`gates/lang/`: Node and TypeScript from package.json,
then the others), each gate with the reason it was chosen (`GateConfig.reasons`); a tool they
declare but that is not installed (a runner missing from node_modules) is a note at the start.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from stepswitch.errors import ConfigError
from stepswitch.gates.tools import pytest_command
from stepswitch.util.config_model import Strict, key_of, validate
from stepswitch.util.globs import glob_match
from stepswitch.util.toml import read_toml

PYPROJECT = "pyproject.toml"
OWN_FILE = ".stepswitch.toml"
PYPROJECT_KEY = "tool.stepswitch.gates"
OWN_KEY = "gates"
KINDS = ("command", "tests", "suite", "golden", "protected")
DOCS = "the docstring of stepswitch/gates/config.py"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_CONSTANT = r"^(?:(?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*|\*)$"  # NAME, Class.NAME or *

Seconds = Annotated[float, Field(gt=0, strict=True)]
Tolerance = Annotated[float, Field(ge=0, strict=True)]
Text = Annotated[str, Field(min_length=1, strict=True)]


class _Gate(Strict):
    name: str
    globs: tuple[Text, ...] = ()  # empty: run on every change

    def applies_to(self, changed: list[str] | None) -> bool:
        """Whether a change touching `changed` must run this gate (None: changes unknown)."""
        if changed is None or not self.globs:
            return True
        return any(glob_match(g, path) for g in self.globs for path in changed)


class CommandGate(_Gate):
    kind: Literal["command"] = "command"
    command: Text
    timeout_s: Seconds = 600.0


class TestsGate(_Gate):
    __test__ = False  # not a pytest test class

    kind: Literal["tests"]
    command: Text  # the full suite; "{tests}" marks where the impacted files go
    timeout_s: Seconds = 1800.0
    impacted_first: bool = Field(default=True, strict=True)
    call_map: bool = Field(default=True, strict=True)
    warm: bool = Field(default=True, strict=True)  # stages forked from an imported pytest
    # "checked": a test file the change edited or deleted also runs as the base commit has it
    # (gates/as_before.py); "allowed": for tasks that must change what a test says.
    test_changes: Literal["checked", "allowed"] = "checked"

    def stage_command(self, files: list[str] | None) -> str:
        """The command for the impacted stage (`files`) or the full suite (None)."""
        args = shlex.join(files) if files else ""
        if "{tests}" in self.command:
            return self.command.replace("{tests}", args).strip()
        return f"{self.command} {args}".strip()


RunnerName = Literal["node-test", "jest", "vitest", "mocha", "cargo", "go", "make"]


class SuiteGate(_Gate):
    """A test suite in another language than Python, run by its own runner (`gates/lang/`): the
    runner's reporter names the failing tests, and impacted-first runs what the runner can
    narrow to (Jest's related tests, the Go packages a change reaches...) before the full suite."""

    kind: Literal["suite"]
    runner: RunnerName
    command: Text  # the full suite, as the project runs it: "npm test", "cargo test"
    timeout_s: Seconds = 1800.0
    impacted_first: bool = Field(default=True, strict=True)


class GoldenGate(_Gate):
    kind: Literal["golden"]
    expected: Text  # committed file of expected values, relative to the repository root
    command: Text  # prints the actual values, or writes them to `actual`
    actual: Text | None = None  # None: the command's standard output
    format: Literal["auto", "json", "csv"] = "auto"
    rtol: Tolerance = 1e-5
    atol: Tolerance = 1e-8
    timeout_s: Seconds = 600.0

    @property
    def value_format(self) -> Literal["json", "csv"]:
        if self.format != "auto":
            return self.format
        return "csv" if self.expected.lower().endswith(".csv") else "json"


ConstantNames = Annotated[tuple[Annotated[str, Field(pattern=_CONSTANT)], ...], Field(min_length=1)]


class ProtectedGate(_Gate):
    kind: Literal["protected"]
    paths: tuple[Text, ...] = ()  # globs the agent may not write; any change to them fails
    constants: dict[str, ConstantNames] = Field(default_factory=dict)  # file -> names

    @model_validator(mode="after")
    def _something_protected(self) -> ProtectedGate:
        if not self.paths and not self.constants:
            raise ValueError("protects nothing: give `paths`, `constants` or both")
        return self


GateSpec = CommandGate | TestsGate | SuiteGate | GoldenGate | ProtectedGate
_MODELS: dict[str, type[_Gate]] = {
    "command": CommandGate,
    "tests": TestsGate,
    "suite": SuiteGate,
    "golden": GoldenGate,
    "protected": ProtectedGate,
}


@dataclass(frozen=True)
class GateConfig:
    gates: tuple[GateSpec, ...]
    source: str  # "pyproject.toml [tool.stepswitch.gates]", ".stepswitch.toml [gates]", "detected"
    config_file: str | None = None  # the file that holds the configuration, relative to the root
    notes: tuple[str, ...] = ()  # what detection left out and why, for the run's start
    # Per detected gate, why detection chose it ("package.json scripts.test runs node --test").
    reasons: tuple[tuple[str, str], ...] = ()
    # What the detected gates check, for the lines a user reads: ("Python",), ("Node",)...
    languages: tuple[str, ...] = ("Python",)

    @property
    def detected(self) -> bool:
        return self.config_file is None

    @property
    def speaks_python(self) -> bool:
        """Whether the lines a user reads speak of Python (its interpreter, the packages the
        tests import): detected gates that found Python, or configured ones unless their only
        test suites are other languages' (`kind = "suite"`)."""
        if self.detected:
            return "Python" in self.languages
        kinds = {type(g) for g in self.gates}
        return TestsGate in kinds or SuiteGate not in kinds


# -- reading ------------------------------------------------------------------------------------


def _read_toml(path: Path, name: str) -> dict[str, Any]:
    try:
        return read_toml(path, "TOML file", "check the file")
    except ConfigError as exc:  # named as the repository names it, not by its absolute path
        raise ConfigError(name, exc.key, exc.problem, exc.fix) from exc


def _pyproject_table(data: dict[str, Any]) -> object | None:
    tool = data.get("tool")
    stepswitch = tool.get("stepswitch") if isinstance(tool, dict) else None
    return stepswitch.get("gates") if isinstance(stepswitch, dict) else None


def _present(path: Path, name: str) -> bool:
    """Whether the repository has this config file; one that is there but is no regular file
    (a FIFO, a device, a folder: reading it would never return, or never end) is refused by
    the one input reader, naming what it is."""
    if not os.path.lexists(path):
        return False
    if not path.is_file():
        _read_toml(path, name)  # raises ConfigError: what the path is instead
    return True


def read_gate_config(root: Path) -> GateConfig | None:
    """The repository's gate configuration, or None when it has none. Raises ConfigError."""
    pyproject, own = root / PYPROJECT, root / OWN_FILE
    has_pyproject = _present(pyproject, PYPROJECT)
    table = _pyproject_table(_read_toml(pyproject, PYPROJECT)) if has_pyproject else None
    if _present(own, OWN_FILE):
        data = _read_toml(own, OWN_FILE)
        if table is not None:
            raise ConfigError(
                OWN_FILE,
                OWN_KEY,
                f"{PYPROJECT} also has [{PYPROJECT_KEY}]; the gates come from one file",
                f"keep the gates in {OWN_FILE} or in {PYPROJECT}, not both",
            )
        if OWN_KEY not in data:
            raise ConfigError(
                OWN_FILE,
                OWN_KEY,
                "missing: this file configures the gates under [gates.<name>] tables",
                'add e.g. [gates.tests] with kind = "tests", or remove the file',
            )
        gates = _parse_gates(data[OWN_KEY], OWN_FILE, OWN_KEY, root)
        return GateConfig(gates, f"{OWN_FILE} [{OWN_KEY}]", OWN_FILE)
    if table is None:
        return None
    gates = _parse_gates(table, PYPROJECT, PYPROJECT_KEY, root)
    return GateConfig(gates, f"{PYPROJECT} [{PYPROJECT_KEY}]", PYPROJECT)


_FIELD_HINTS = {
    "command": 'a shell command, e.g. command = "ruff check ."',
    "timeout_s": "seconds above 0, e.g. timeout_s = 600",
    "globs": 'a list of globs, e.g. globs = ["*.py"]',
    "impacted_first": "true or false",
    "runner": 'one of "node-test", "jest", "vitest", "mocha", "cargo", "go", "make"',
    "expected": 'a path in the repository, e.g. expected = "tests/golden/values.json"',
    "actual": 'a path in the repository, e.g. actual = "out/values.json"',
    "format": 'one of "auto", "json", "csv"',
    "rtol": "a number >= 0, e.g. rtol = 1e-6",
    "atol": "a number >= 0, e.g. atol = 1e-12",
    "paths": 'a list of globs, e.g. paths = ["data/reference/**"]',
    "constants": 'file -> names, e.g. constants = { "src/pkg/constants.py" = ["G", "Units.EV"] }',
}


def _problem_of(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "missing"
    if kind == "string_pattern_mismatch":
        return f"{error['input']!r} is not a constant name (NAME, Class.NAME or *)"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    return str(error["msg"])


def _fix_for(error: Any, model: type[_Gate]) -> str:
    if error["type"] == "extra_forbidden":
        allowed = [f for f in model.model_fields if f != "name"]
        return "remove it or use one of: " + ", ".join(allowed)
    loc = error["loc"]
    field = str(loc[0]) if loc else ""
    if field in _FIELD_HINTS:
        return _FIELD_HINTS[field]
    if model is ProtectedGate:
        return f"{_FIELD_HINTS['paths']}, or {_FIELD_HINTS['constants']}"
    return f"see {DOCS}"


def _parse_gates(table: object, file: str, prefix: str, root: Path) -> tuple[GateSpec, ...]:
    if not isinstance(table, dict):
        raise ConfigError(
            file, prefix, "must be a table of gates", f"write [{prefix}.<name>] tables"
        )
    gates: list[GateSpec] = []
    for name, body in table.items():
        key = f"{prefix}.{name}"
        if not _NAME.match(name):
            raise ConfigError(
                file, key, "a gate name must be letters, digits, '.', '_' or '-'", "rename it"
            )
        if not isinstance(body, dict):
            raise ConfigError(
                file, key, "must be a table", f'write [{key}] with command = "..." under it'
            )
        gates.append(_parse_gate(name, body, file, key, root))
    return tuple(gates)


def _parse_gate(name: str, body: dict[str, Any], file: str, key: str, root: Path) -> GateSpec:
    kind = body.get("kind", "command")
    if kind not in _MODELS:
        raise ConfigError(
            file, f"{key}.kind", f"unknown kind {kind!r}", "use one of: " + ", ".join(KINDS)
        )
    if "name" in body:
        raise ConfigError(file, f"{key}.name", "unknown key", "the table's own name is the gate's")
    data = {**body, "name": name}
    if kind == "tests":
        data.setdefault("command", pytest_command(root))
    model = _MODELS[kind]
    gate = validate(
        model,
        data,
        file,
        key=lambda error: key_of(error["loc"], key),
        problem=_problem_of,
        fix=lambda error: _fix_for(error, model),
    )
    assert isinstance(gate, CommandGate | TestsGate | SuiteGate | GoldenGate | ProtectedGate)
    _check_paths(gate, file, key)
    return gate


def _inside(path: str) -> bool:
    pure = PurePosixPath(path.strip())
    return not pure.is_absolute() and ".." not in pure.parts and not path.startswith("~")


def _check_paths(gate: GateSpec, file: str, key: str) -> None:
    named: list[tuple[str, str]] = []
    if isinstance(gate, GoldenGate):
        named.append(("expected", gate.expected))
        if gate.actual is not None:
            named.append(("actual", gate.actual))
        if gate.format == "auto" and not gate.expected.lower().endswith((".json", ".csv")):
            raise ConfigError(
                file,
                f"{key}.expected",
                "the file is neither .json nor .csv",
                'set format = "json" or format = "csv"',
            )
    if isinstance(gate, ProtectedGate):
        named += [(f"paths[{i}]", p) for i, p in enumerate(gate.paths)]
        named += [(f"constants.{p}", p) for p in gate.constants]
    for sub, path in named:
        if not _inside(path):
            raise ConfigError(
                file,
                f"{key}.{sub}",
                f"{path!r} is not inside the repository",
                "use a path relative to the repository root",
            )
