"""The pre-flight: before the first paid call every gate is checked and run once on the untouched
tree. A gate that cannot run at all is a one-line ConfigError (exit 2); a gate that runs and fails
is part of the baseline, and said plainly when it is not the tests. Real git repositories in
tmp_path; one case through `ssw run`'s own entry point shows that no call is made."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from stepswitch.agent.repo_gates import RepoGates
from stepswitch.errors import ConfigError, UsageError
from stepswitch.gates.config import CommandGate, GateConfig, read_gate_config
from stepswitch.gates.preflight import Baseline, GateUnusable, missing_command, preflight_gates
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.warm import WarmPytest, WarmStarter
from tests.gates import left_out_plugins
from tests.harness.repo import git, write_repo

PY = shlex.quote(sys.executable)
PYTEST = f"{PY} -m pytest -q -p no:cacheprovider"
CALC = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def repo_with(
    root: Path,
    gates: str,
    files: dict[str, str] | None = None,
    start_warm: WarmStarter = WarmPytest,
) -> GateSuite:
    """A committed repository with `gates` as its [tool.stepswitch.gates.*] tables."""
    pyproject = textwrap.dedent(gates).replace("$PYTEST", PYTEST).replace("$PY", PY)
    write_repo(root, {**CALC, **(files or {}), "pyproject.toml": pyproject}, commit=True)
    config = read_gate_config(root)
    assert config is not None
    return GateSuite(config, root, dict(os.environ), start_warm=start_warm)


def preflight(suite: GateSuite) -> Baseline:
    """The pre-flight at HEAD; then the warm pytest it leaves for the first gate run is ended."""
    try:
        return preflight_gates(suite, "HEAD")
    finally:
        suite.close()


def refusal(suite: GateSuite) -> str:
    with pytest.raises(GateUnusable) as caught:
        preflight_gates(suite, "HEAD")
    assert caught.value.exit_code == 2 and isinstance(caught.value, ConfigError)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- refusals ------------------------------------------------------------------------------------


def test_a_missing_command_is_one_line_naming_the_gate_the_word_and_the_key(tmp_path: Path) -> None:
    suite = repo_with(
        tmp_path, '[tool.stepswitch.gates.lint]\ncommand = "no-such-tool-ssw check ."\n'
    )
    assert refusal(suite) == (
        "gates: lint: command not found: no-such-tool-ssw (fix: install it in the repository's "
        "venv or change [tool.stepswitch.gates.lint].command)"
    )


def test_a_command_missing_behind_shell_syntax_is_found_by_running_it(tmp_path: Path) -> None:
    gates = '[tool.stepswitch.gates.lint]\ncommand = "cd . && no-such-tool-ssw check ."\n'
    assert refusal(repo_with(tmp_path, gates)).startswith(
        "gates: lint: command not found: no-such-tool-ssw (fix: "
    )


def test_a_missing_tool_of_a_detected_gate_says_to_install_it_or_configure_gates(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, CALC, commit=True)
    config = GateConfig((CommandGate(name="lint", command="no-such-ruff-ssw check ."),), "detected")
    message = refusal(GateSuite(config, tmp_path, dict(os.environ)))
    assert message.startswith("gates: lint: command not found: no-such-ruff-ssw (fix: install it")
    assert "configure the gates under [tool.stepswitch.gates]" in message


def test_a_hanging_gate_is_refused_naming_its_timeout(tmp_path: Path) -> None:
    gates = """
        [gates.slow]
        command = "sleep 60"
        timeout_s = 0.5
    """
    write_repo(tmp_path, {**CALC, ".stepswitch.toml": gates}, commit=True)
    config = read_gate_config(tmp_path)
    assert config is not None
    assert refusal(GateSuite(config, tmp_path, dict(os.environ))) == (
        "gates: slow: timed out after 0.5 s on the untouched tree (timeout_s = 0.5) (fix: make "
        "the command finish sooner or raise [gates.slow].timeout_s in .stepswitch.toml)"
    )


@pytest.mark.slow  # a real warm pytest
def test_a_refusal_after_the_collection_ends_the_warm_pytest_it_forked_from(
    tmp_path: Path,
) -> None:
    servers: list[int] = []

    class NotedWarmPytest(WarmPytest):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            assert self._proc is not None
            servers.append(self._proc.pid)

    gates = """
        [tool.stepswitch.gates.tests]
        kind = "tests"
        command = "$PYTEST"

        [tool.stepswitch.gates.slow]
        command = "sleep 60"
        timeout_s = 0.5
    """
    suite = repo_with(tmp_path, gates, start_warm=NotedWarmPytest)
    assert refusal(suite).startswith("gates: slow: timed out after 0.5 s on the untouched tree")
    # The collection ran in the warm pytest the pre-flight started (ADR 0044); the refusal ended
    # it, so nothing the pre-flight started outlives it.
    assert len(servers) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(servers[0], 0)


def test_a_command_that_cannot_be_executed_is_refused(tmp_path: Path) -> None:
    gates = '[tool.stepswitch.gates.lint]\ncommand = "cd . && ./lint.sh"\n'
    message = refusal(repo_with(tmp_path, gates, {"lint.sh": "#!/bin/sh\n"}))
    assert message.startswith("gates: lint: the command cannot be executed (exit 126): ")
    assert "Permission denied" in message


GOLDEN_GATE = """
    [tool.stepswitch.gates.energies]
    kind = "golden"
    expected = "golden/e.json"
    command = "$PY -c 'print(1.0)'"
"""


def _preflight_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("ssw-")]


def test_a_project_that_does_not_import_is_refused_first_and_leaves_no_thread_behind(
    tmp_path: Path,
) -> None:
    # The import check runs beside the truth check (ADR 0084), which here finds a golden file
    # changed: the import check's refusal is still the one raised, as when they ran in turn,
    # and neither it nor the plugin probe started for the gate goes on.
    files = {"calc/__init__.py": "import not_installed_anywhere\n", "golden/e.json": "1.0"}
    suite = repo_with(tmp_path, GOLDEN_GATE, files)
    (tmp_path / "golden/e.json").write_text("3.0", encoding="utf-8")
    with pytest.raises(UsageError, match=r"cannot import calc with .*not_installed_anywhere"):
        preflight_gates(suite, "HEAD")
    assert _preflight_threads() == []


def test_a_golden_file_missing_from_the_base_commit_is_refused(tmp_path: Path) -> None:
    suite = repo_with(tmp_path, GOLDEN_GATE)
    (tmp_path / "golden").mkdir()
    (tmp_path / "golden/e.json").write_text("1.0", encoding="utf-8")  # there, but uncommitted
    message = refusal(suite)
    assert re.fullmatch(
        r"gates: energies: the golden file golden/e\.json: no such file at the base commit "
        r"[0-9a-f]{12} \(fix: commit the file, or change "
        r"\[tool\.stepswitch\.gates\.energies\]\.expected\)",
        message,
    ), message


@pytest.mark.parametrize(
    ("text", "why"),
    [("{oops", "not valid JSON"), ('{"label": "x"}', "it holds no numbers to compare")],
)
def test_a_malformed_golden_file_is_refused_saying_why(tmp_path: Path, text: str, why: str) -> None:
    message = refusal(repo_with(tmp_path, GOLDEN_GATE, {"golden/e.json": text}))
    assert message.startswith(f"gates: energies: the golden file golden/e.json: {why}")
    assert "(fix: fix it and commit it, or change [tool.stepswitch.gates.energies].expected)" in (
        message
    )


def test_a_protected_path_that_matches_no_file_is_refused(tmp_path: Path) -> None:
    gates = '[tool.stepswitch.gates.ref]\nkind = "protected"\npaths = ["data/referense/**"]\n'
    message = refusal(repo_with(tmp_path, gates, {"data/reference/t.csv": "a\n1\n"}))
    assert message.startswith(
        "gates: ref: the protected path 'data/referense/**' matches no file of the base commit"
    )
    assert message.endswith("(fix: correct [tool.stepswitch.gates.ref].paths[0])")


@pytest.mark.parametrize(
    ("constants", "problem"),
    [
        ('{ "calc/ops.py" = ["G"] }', "calc/ops.py: G is not assigned at the top level"),
        ('{ "calc/units.py" = ["G"] }', "calc/units.py: not in the base commit"),
        ('{ "calc/ops.py" = ["*"] }', "calc/ops.py: '*' protects nothing: no UPPER_CASE name"),
    ],
)
def test_a_protected_constant_missing_at_the_base_commit_is_refused(
    tmp_path: Path, constants: str, problem: str
) -> None:
    gates = f'[tool.stepswitch.gates.consts]\nkind = "protected"\nconstants = {constants}\n'
    message = refusal(repo_with(tmp_path, gates))
    assert message.startswith(f"gates: consts: {problem}"), message


def test_pytest_that_cannot_start_is_refused(tmp_path: Path) -> None:
    gates = (
        f'[tool.stepswitch.gates.tests]\nkind = "tests"\ncommand = "{PY} -m no_such_pytest_ssw"\n'
    )
    message = refusal(repo_with(tmp_path, gates))
    assert message.startswith("gates: tests: pytest cannot collect the tests (exit 1): ")
    assert "No module named no_such_pytest_ssw" in message


def test_a_test_collection_that_hangs_is_refused_naming_the_timeout(tmp_path: Path) -> None:
    gates = '[tool.stepswitch.gates.tests]\nkind = "tests"\ncommand = "$PYTEST"\ntimeout_s = 1\n'
    suite = repo_with(tmp_path, gates, {"tests/conftest.py": "import time\ntime.sleep(60)\n"})
    assert refusal(suite).startswith(
        "gates: tests: timed out after 1 s on the untouched tree (timeout_s = 1)"
    )


def test_every_check_that_needs_no_command_comes_before_any_gate_runs(tmp_path: Path) -> None:
    gates = (
        """
        [tool.stepswitch.gates.first]
        command = "touch ran.txt"
    """
        + GOLDEN_GATE
    )
    suite = repo_with(tmp_path, gates)
    assert "golden/e.json: no such file" in refusal(suite)
    assert not (tmp_path / "ran.txt").exists()


# -- baselines ---------------------------------------------------------------------------------


@pytest.mark.slow  # real pytest collections
def test_passing_gates_give_a_baseline_and_one_line_of_what_ran(tmp_path: Path) -> None:
    gates = """
        [tool.stepswitch.gates.lint]
        command = "true"

        [tool.stepswitch.gates.tests]
        kind = "tests"
        command = "$PYTEST"
    """
    baseline = preflight(repo_with(tmp_path, gates))
    assert [(g.name, g.passed) for g in baseline.gates] == [("lint", True), ("tests:collect", True)]
    assert baseline.gates[1].report == "tests:collect: collected 1 test"
    line, call_map = baseline.lines()
    assert re.fullmatch(
        r"gates: before any edit: lint passed \(\d+\.\d\d s\), "
        r"tests collected 1 test \(\d+\.\d\d s\)",
        line,
    ), line
    # The suite was traced once, so the tests that ran a changed line can go first.
    assert re.fullmatch(
        rf"gates: call map: 1 tests traced at {baseline.base_commit[:12]} in \d+\.\d s", call_map
    ), call_map
    assert baseline.records()[0] == {
        "name": "lint",
        "passed": True,
        "duration_s": baseline.gates[0].duration_s,
        "report": "lint: passed",
    }
    json.dumps(baseline.records())  # plain data for run.json


def test_a_gate_failing_before_any_edit_is_said_plainly_and_is_no_error(tmp_path: Path) -> None:
    gates = """
        [tool.stepswitch.gates.lint]
        command = "echo 'calc/ops.py:1:1: F401 unused'; exit 1"
    """
    baseline = preflight(repo_with(tmp_path, gates))
    assert [(g.name, g.passed) for g in baseline.gates] == [("lint", False)]
    # Its findings can be read: from here on the change is judged by those it adds.
    assert baseline.lines()[1] == (
        "gates: lint already fails before any edit (1 finding(s)), so the change is judged by "
        "the findings it adds"
    )


def test_golden_values_that_differ_before_any_edit_are_a_baseline_failure(tmp_path: Path) -> None:
    baseline = preflight(repo_with(tmp_path, GOLDEN_GATE, {"golden/e.json": "2.0"}))
    assert not baseline.gates[0].passed
    assert baseline.lines()[1].startswith("gates: energies already fails before any edit")


@pytest.mark.slow  # real pytest collections
def test_tests_that_do_not_import_before_the_change_are_a_baseline_not_a_refusal(
    tmp_path: Path,
) -> None:
    gates = '[tool.stepswitch.gates.tests]\nkind = "tests"\ncommand = "$PYTEST -x"\n'
    files = {"tests/test_new.py": "from calc import median\n\ndef test_m():\n    pass\n"}
    baseline = preflight(repo_with(tmp_path, gates, files))
    [collect] = baseline.gates
    assert (collect.name, collect.passed) == ("tests:collect", False)
    assert "1 collection error" in collect.report and "ERROR tests/test_new.py" in collect.report
    assert baseline.already_failing == ()  # failing tests are where most tasks start
    assert baseline.lines()[1:] == ["gates: no call map: the tests do not collect before any edit"]


@pytest.mark.slow  # real pytest collections
def test_no_tests_at_all_is_said_in_the_baseline(tmp_path: Path) -> None:
    gates = '[tool.stepswitch.gates.tests]\nkind = "tests"\ncommand = "$PYTEST tests/nothing"\n'
    suite = repo_with(tmp_path, gates, {"tests/nothing/README": "none yet\n"})
    [collect] = preflight(suite).gates
    assert not collect.passed and "no tests collected" in collect.report


def test_a_start_tree_that_already_differs_in_a_golden_file_is_said_plainly(
    tmp_path: Path,
) -> None:
    suite = repo_with(tmp_path, GOLDEN_GATE, {"golden/e.json": "1.0"})
    (tmp_path / "golden/e.json").write_text("3.0", encoding="utf-8")
    baseline = preflight(suite)
    assert [(g.name, g.passed) for g in baseline.gates] == [
        ("ssw:protected", False),
        ("energies", True),  # against the committed 1.0, not the worktree's 3.0
    ]
    assert baseline.lines()[1] == (
        "gates: ssw:protected already fails before any edit, so the change must also fix it: "
        "golden/e.json: modified, but it is the golden file of gate energies"
    )


def test_repo_gates_say_what_the_preflight_found_at_the_run_start(tmp_path: Path) -> None:
    gates = """
        [tool.stepswitch.gates.lint]
        command = "echo 'bad style'; exit 1"
    """
    repo_with(tmp_path, gates)
    config = read_gate_config(tmp_path)
    assert config is not None
    base = git(tmp_path, "rev-parse", "HEAD").strip()
    gates_ = RepoGates(config, tmp_path, dict(os.environ), base)
    baseline = gates_.preflight()
    assert gates_.baseline is baseline and baseline.base_commit == base
    lines = gates_.description.splitlines()
    assert lines[0] == "  gates (pyproject.toml [tool.stepswitch.gates]): lint"
    assert lines[2] == "  gates: the tests import calc from " + str(tmp_path / "calc/__init__.py")
    assert lines[-1] == (
        "  gates: lint already fails before any edit, so the change must also fix it: bad style"
    )


def test_the_first_word_of_a_command_is_looked_up_like_the_shell_would(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], **left_out_plugins()}
    (tmp_path / "tool.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    assert missing_command("FOO=1 no-such-ssw --x", env, tmp_path) == (
        "command not found: no-such-ssw"
    )
    assert missing_command("./tool.sh", env, tmp_path) == "not executable: ./tool.sh"
    (tmp_path / "tool.sh").chmod(0o755)
    assert missing_command("./tool.sh", env, tmp_path) is None
    assert missing_command("cd src && make", env, tmp_path) is None  # a builtin
    assert missing_command("$TOOL check", env, tmp_path) is None  # the shell decides
    assert missing_command("git status", env, tmp_path) is None
