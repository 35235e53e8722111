from __future__ import annotations

import os
from pathlib import Path

import pytest

from stepswitch.errors import ConfigError
from stepswitch.gates.config import (
    CommandGate,
    GoldenGate,
    ProtectedGate,
    TestsGate,
    read_gate_config,
)
from stepswitch.gates.detect import detect_gates, load_gates
from stepswitch.gates.truth_paths import protected_paths
from tests.harness.repo import write_repo

PYPROJECT_GATES = """
[project]
name = "x"

[tool.stepswitch.gates.lint]
command = "ruff check ."
timeout_s = 60
globs = ["*.py"]

[tool.stepswitch.gates.tests]
kind = "tests"
command = "python -m pytest -q {tests}"

[tool.stepswitch.gates.energies]
kind = "golden"
expected = "golden/energies.json"
command = "python -m model"
rtol = 1e-6

[tool.stepswitch.gates.constants]
kind = "protected"
paths = ["data/reference/**"]
constants = { "model/constants.py" = ["G", "Units.EV"] }
"""


def _error(root: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        read_gate_config(root)
    return caught.value


def test_gates_configured_in_pyproject_load_in_file_order_with_their_kinds(tmp_path: Path) -> None:
    write_repo(tmp_path, {"pyproject.toml": PYPROJECT_GATES})
    config = load_gates(tmp_path)
    assert config.source == "pyproject.toml [tool.stepswitch.gates]"
    assert config.config_file == "pyproject.toml"
    assert [g.name for g in config.gates] == ["lint", "tests", "energies", "constants"]
    lint, tests, golden, protected = config.gates
    assert lint == CommandGate(name="lint", command="ruff check .", timeout_s=60.0, globs=("*.py",))
    assert isinstance(tests, TestsGate) and tests.impacted_first
    assert isinstance(golden, GoldenGate)
    assert (golden.rtol, golden.atol, golden.value_format) == (1e-6, 1e-8, "json")
    assert isinstance(protected, ProtectedGate)
    assert protected.constants == {"model/constants.py": ("G", "Units.EV")}


def test_a_stepswitch_toml_file_configures_gates_under_a_gates_table(tmp_path: Path) -> None:
    write_repo(tmp_path, {".stepswitch.toml": '[gates.check]\ncommand = "make check"\n'})
    config = load_gates(tmp_path)
    assert config.source == ".stepswitch.toml [gates]"
    assert config.gates == (CommandGate(name="check", command="make check"),)


def test_gates_in_both_files_is_an_error_naming_both(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT_GATES,
            ".stepswitch.toml": '[gates.check]\ncommand = "make check"\n',
        },
    )
    error = _error(tmp_path)
    assert error.file == ".stepswitch.toml"
    assert "pyproject.toml also has [tool.stepswitch.gates]" in str(error)


@pytest.mark.parametrize(
    ("table", "key", "problem"),
    [
        (
            '[tool.stepswitch.gates.lint]\ncommand = "x"\ntimout_s = 5\n',
            "lint.timout_s",
            "unknown key",
        ),
        ('[tool.stepswitch.gates.lint]\ncommand = "x"\ntimeout_s = "fast"\n', "lint.timeout_s", ""),
        ('[tool.stepswitch.gates.lint]\ncommand = "x"\ntimeout_s = 0\n', "lint.timeout_s", ""),
        ("[tool.stepswitch.gates.lint]\ntimeout_s = 5\n", "lint.command", "missing"),
        ('[tool.stepswitch.gates.lint]\nkind = "fuzz"\n', "lint.kind", "unknown kind 'fuzz'"),
        ('[tool.stepswitch.gates.lint]\ncommand = "x"\nglobs = "*.py"\n', "lint.globs", ""),
        ('[tool.stepswitch.gates]\nlint = "ruff check"\n', "lint", "must be a table"),
        ('[tool.stepswitch]\ngates = ["ruff"]\n', "tool.stepswitch.gates", "table of gates"),
        (
            '[tool.stepswitch.gates.g]\nkind = "golden"\nexpected = "../g.json"\ncommand = "x"\n',
            "g.expected",
            "not inside the repository",
        ),
        (
            '[tool.stepswitch.gates.g]\nkind = "golden"\nexpected = "g.txt"\ncommand = "x"\n',
            "g.expected",
            "neither .json nor .csv",
        ),
        ('[tool.stepswitch.gates.p]\nkind = "protected"\n', "p", "protects nothing"),
        (
            '[tool.stepswitch.gates.p]\nkind = "protected"\nconstants = { "c.py" = ["1X"] }\n',
            "p.constants.c.py[0]",
            "",
        ),
        ('[tool.stepswitch.gates.t]\nkind = "tests"\nimpacted_first = 1\n', "t.impacted_first", ""),
    ],
)
def test_a_misconfigured_gate_table_is_a_config_error_naming_the_key(
    tmp_path: Path, table: str, key: str, problem: str
) -> None:
    write_repo(tmp_path, {"pyproject.toml": table})
    error = _error(tmp_path)
    assert error.file == "pyproject.toml"
    assert error.key.endswith(key), error.key
    assert problem in str(error)
    assert "\n" not in str(error)


def test_a_stepswitch_toml_without_a_gates_table_is_an_error(tmp_path: Path) -> None:
    write_repo(tmp_path, {".stepswitch.toml": '[gate.lint]\ncommand = "x"\n'})
    error = _error(tmp_path)
    assert (error.file, error.key) == (".stepswitch.toml", "gates")


def test_a_toml_syntax_error_names_the_file(tmp_path: Path) -> None:
    write_repo(tmp_path, {"pyproject.toml": "[tool.stepswitch.gates\n"})
    assert _error(tmp_path).key == "(syntax)"


def test_an_empty_gate_table_means_no_gates(tmp_path: Path) -> None:
    write_repo(tmp_path, {"pyproject.toml": "[tool.stepswitch.gates]\n", "tests/test_a.py": ""})
    assert load_gates(tmp_path).gates == ()


def test_a_tests_gate_puts_impacted_files_at_the_placeholder_or_at_the_end() -> None:
    gate = TestsGate(name="t", kind="tests", command="pytest -q {tests} --tb=short")
    assert gate.stage_command(["tests/test_a.py"]) == "pytest -q tests/test_a.py --tb=short"
    assert gate.stage_command(None) == "pytest -q  --tb=short"
    plain = TestsGate(name="t", kind="tests", command="pytest -q")
    assert plain.stage_command(["a b.py"]) == "pytest -q 'a b.py'"


def test_a_gate_with_globs_applies_only_when_a_changed_file_matches() -> None:
    gate = CommandGate(name="lint", command="x", globs=("*.py", "docs/**"))
    assert gate.applies_to(["src/pkg/mod.py"])
    assert gate.applies_to(["docs/a/b.md"])
    assert not gate.applies_to(["README.md"])
    assert gate.applies_to(None)  # changes unknown: every gate runs


def test_a_repo_that_configures_ruff_and_mypy_gets_format_lint_types_and_tests(
    tmp_path: Path,
) -> None:
    write_repo(
        tmp_path,
        {
            "pyproject.toml": '[tool.ruff]\nline-length = 100\n[tool.mypy]\nfiles = ["pkg"]\n',
            "pkg/__init__.py": "",
            "tests/test_pkg.py": "def test_x():\n    pass\n",
        },
    )
    config = detect_gates(tmp_path)
    assert config.source == "detected" and config.detected
    assert [g.name for g in config.gates] == ["format", "lint", "types", "tests"]
    commands = [g.command for g in config.gates if isinstance(g, CommandGate | TestsGate)]
    assert commands[0].endswith("ruff format --check .")
    assert commands[1].endswith("ruff check --output-format concise .")
    assert commands[2].endswith("mypy")  # the config names the files
    assert "-m pytest" in commands[3]


def test_mypy_is_detected_from_mypy_ini_or_setup_cfg_and_given_a_target(tmp_path: Path) -> None:
    write_repo(tmp_path, {"setup.cfg": "[mypy]\nstrict = True\n", "src/pkg/__init__.py": ""})
    (types,) = detect_gates(tmp_path).gates
    assert isinstance(types, CommandGate) and types.command.endswith("mypy src")
    other = tmp_path / "other"
    write_repo(other, {"mypy.ini": "[mypy]\n", "mod.py": ""})
    (types,) = detect_gates(other).gates
    assert isinstance(types, CommandGate) and types.command.endswith("mypy .")


def test_a_repo_without_tool_config_gets_only_pytest_and_none_without_tests(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, {"setup.cfg": "[metadata]\nname = x\n", "tests/test_a.py": ""})
    assert [g.name for g in detect_gates(tmp_path).gates] == ["tests"]
    empty = tmp_path / "empty"
    write_repo(empty, {"mod.py": "X = 1\n"})
    assert detect_gates(empty).gates == ()


def test_detected_tools_come_from_the_repository_venv_when_it_has_one(tmp_path: Path) -> None:
    write_repo(tmp_path, {"ruff.toml": "", ".venv/bin/ruff": "#!/bin/sh\n", "tests/test_a.py": ""})
    (tmp_path / ".venv/bin/ruff").chmod(0o755)
    (tmp_path / ".venv/pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    fmt = detect_gates(tmp_path).gates[0]
    assert isinstance(fmt, CommandGate)
    assert fmt.command.startswith(str(tmp_path / ".venv/bin/ruff"))
    assert os.access(tmp_path / ".venv/bin/ruff", os.X_OK)


def test_protected_paths_hold_the_gate_config_golden_files_and_protected_paths(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, {"pyproject.toml": PYPROJECT_GATES})
    assert protected_paths(load_gates(tmp_path)) == (
        ".stepswitch.toml",
        "pyproject.toml",
        "golden/energies.json",
        "data/reference/**",
    )


def test_detected_gates_protect_only_a_would_be_stepswitch_toml(tmp_path: Path) -> None:
    write_repo(tmp_path, {"tests/test_a.py": ""})
    assert protected_paths(load_gates(tmp_path)) == (".stepswitch.toml",)


def test_a_tool_configured_but_missing_from_the_projects_environment_is_no_gate(
    tmp_path: Path,
) -> None:
    # The project has its own environment, without ruff or mypy: ssw's copies would judge it by
    # another version (issue 21: the untouched tree failed at format and types, no test ran).
    write_repo(
        tmp_path,
        {
            "pyproject.toml": "[tool.ruff]\nline-length = 100\n[tool.mypy]\nstrict = true\n",
            ".venv/bin/python": "#!/bin/sh\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    (tmp_path / ".venv/bin/python").chmod(0o755)
    (tmp_path / ".venv/pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")

    config = detect_gates(tmp_path)

    assert [g.name for g in config.gates] == ["tests"]
    assert config.notes == (
        "gates: no format and lint gate: the project configures ruff, but its environment has no "
        "ruff (install it there, or configure the gates in [tool.stepswitch.gates])",
        "gates: no types gate: the project configures mypy, but its environment has no mypy "
        "(install it there, or configure the gates in [tool.stepswitch.gates])",
    )


def test_a_tool_among_the_development_dependencies_counts_as_configured(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "pyproject.toml": (
                '[project]\nname = "x"\n[project.optional-dependencies]\n'
                'dev = ["ruff>=0.5", "mypy[reports]==1.0"]\n'
            ),
            "src/pkg/__init__.py": "",
        },
    )
    names = [g.name for g in detect_gates(tmp_path).gates]
    assert names == ["format", "lint", "types"]  # from ssw's Python: the project has no venv
