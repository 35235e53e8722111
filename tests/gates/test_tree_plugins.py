"""A pytest plugin the worktree carries (a `*.dist-info` or `*.egg-info` with a `pytest11` entry
point, and its module at the root) is not loaded by the gates' pytest, fresh or warm: a broken
tree stays failing, even where the plugin is the base commit's own; one the change adds fails
`ssw:shadowing` naming it before pytest starts (pytest would still load it for a `-p NAME`).
The controls show each route is real: plain pytest in the same tree reports a pass. A plugin
the project's environment declares (installed in the gates' interpreter, outside the tree)
still loads, and a tree's dist-info that declares that plugin's name does not take its place
(ADR 0047)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stepswitch.gates.config import CommandGate, GateConfig, TestsGate
from stepswitch.gates.interpreter import Interpreter
from stepswitch.gates.plugins import ask_plugins_early, declared_plugins
from stepswitch.gates.probe import ask_environment
from stepswitch.gates.shadowing import SHADOW_CHECK
from stepswitch.gates.suite import GateSuite, SuiteResult
from tests.gates import scratch_env
from tests.harness.cli import run_pytest
from tests.harness.repo import commit_all, write_repo

BUGGY = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
# Every failing report made a pass, as the repro does.
RIGGING = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""
METADATA = "Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"


def plant_plugin(root: Path, folder: str, entry_name: str = "x", module: str = "xplug") -> None:
    """A distribution's metadata at the tree's root whose `pytest11` entry point is `module`."""
    meta = root / folder
    meta.mkdir()
    (meta / ("PKG-INFO" if folder.endswith(".egg-info") else "METADATA")).write_text(
        METADATA.format(name=folder.split("-")[0].split(".")[0])
    )
    (meta / "entry_points.txt").write_text(f"[pytest11]\n{entry_name} = {module}\n")
    (root / f"{module}.py").write_text(RIGGING)


def _suite(
    root: Path, home: Path, python: Path = Path(sys.executable), warm: bool = True
) -> GateSuite:
    command = f"{python} -m pytest -q -p no:cacheprovider"
    gate = TestsGate(name="tests", kind="tests", command=command, warm=warm, timeout_s=120.0)
    interpreter = Interpreter(python, "the test's")
    return GateSuite(GateConfig((gate,), "test"), root, scratch_env(home), interpreter=interpreter)


def _run_suite(
    root: Path, home: Path, python: Path = Path(sys.executable), warm: bool = True
) -> SuiteResult:
    """The tests gate's run of every test (`_suite`), the suite closed after it."""
    suite = _suite(root, home, python, warm)
    try:
        return suite.run(None)
    finally:
        suite.close()


def _plain_pytest(
    root: Path, python: Path = Path(sys.executable)
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    return run_pytest(root, env, python=python)


@pytest.mark.parametrize("folder", ["x-1.0.dist-info", "x.egg-info"])
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_plugin_the_tree_carries_does_not_turn_a_failing_test_into_a_pass(
    tmp_path: Path, folder: str, warm: bool
) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    plant_plugin(root, folder)
    commit_all(root)  # the plugin is the base commit's: the pre-checks leave it to pytest
    result = _run_suite(root, tmp_path / "home", warm=warm)

    assert not result.passed
    assert result.failed is not None and result.failed.name == "tests:full"
    assert "test_add" in result.report
    assert any(stage.warm for stage in result.test_stages) is warm


@pytest.mark.parametrize("folder", ["x-1.0.dist-info", "x.egg-info"])
def test_control_plain_pytest_loads_the_trees_plugin_and_reports_a_pass(
    tmp_path: Path, folder: str
) -> None:
    root = write_repo(tmp_path, BUGGY, commit=True)
    plant_plugin(root, folder)

    done = _plain_pytest(root)

    assert done.returncode == 0, done.stdout  # the failing test "passed"
    assert "1 passed" in done.stdout


# -- a plugin the project's environment declares -------------------------------------------------

DECLARED = """
import pytest

def pytest_configure(config):
    config.addinivalue_line("markers", "declared_marker: a marker of the declared plugin")

@pytest.fixture
def declared_answer():
    return 42
"""
USES_DECLARED = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": (
        "from calc.ops import add\n\n"
        "def test_add(declared_answer):\n    assert add(40, 2) == declared_answer\n"
    ),
}


def environment_with_plugin(folder: Path) -> Path:
    """A virtual environment outside the tree, with this Python's packages (pytest) and a
    distribution `declared` whose `pytest11` entry point `declared` gives a fixture."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = (folder / "lib").glob("python3*/site-packages")
    (site / "ours.pth").write_text(str(Path(pytest.__file__).resolve().parent.parent) + "\n")
    meta = site / "declared-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(METADATA.format(name="declared"))
    (meta / "entry_points.txt").write_text("[pytest11]\ndeclared = declared_plugin\n")
    (site / "declared_plugin.py").write_text(DECLARED)
    return folder / "bin" / "python"


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_plugin_the_environment_declares_still_loads(tmp_path: Path, warm: bool) -> None:
    python = environment_with_plugin(tmp_path / "env")
    # pytest's `required_plugins` sees it, as it sees an autoloaded one.
    required = '[tool.pytest.ini_options]\nrequired_plugins = ["declared>=1.0"]\n'
    root = write_repo(tmp_path / "repo", {**USES_DECLARED, "pyproject.toml": required}, commit=True)
    result = _run_suite(root, tmp_path / "home", python, warm=warm)

    assert result.passed, result.report


def test_a_trees_dist_info_naming_a_declared_plugin_does_not_take_its_place(
    tmp_path: Path,
) -> None:
    python = environment_with_plugin(tmp_path / "env")
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    plant_plugin(root, "y-1.0.dist-info", entry_name="declared")
    commit_all(root)  # the plugin is the base commit's: the pre-checks leave it to pytest
    result = _run_suite(root, tmp_path / "home", python)

    assert not result.passed and "test_add" in result.report
    assert _plain_pytest(root, python).returncode == 0  # control: autoload takes the tree's


# -- a plugin named with -p in the base commit's configuration -----------------------------------

NAMES_PYTESTER = {
    **BUGGY,
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p pytester"\ntestpaths = ["tests"]\n',
}


@pytest.mark.parametrize("where", ["root", "tests"])
def test_a_dist_info_the_change_adds_cannot_answer_for_a_plugin_the_configuration_names(
    tmp_path: Path, where: str
) -> None:
    # pytest looks a `-p NAME` up among the entry points of every distribution on sys.path
    # first, the tree's folders among them: `-p pytester` would load the tree's `xplug`.
    root = write_repo(tmp_path / "repo", NAMES_PYTESTER, commit=True)
    plant_plugin(root if where == "root" else root / "tests", "y-1.0.dist-info", "pytester")
    result = _run_suite(root, tmp_path / "home")

    assert not result.passed and result.stages == (SHADOW_CHECK,)
    folder = "y-1.0.dist-info" if where == "root" else "tests/y-1.0.dist-info"
    assert f"{folder}/entry_points.txt: added, a distribution's metadata" in result.report


def test_control_with_autoload_off_pytest_loads_the_trees_plugin_for_its_p_name(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path, NAMES_PYTESTER, commit=True)
    plant_plugin(root, "y-1.0.dist-info", "pytester")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = run_pytest(root, env)
    assert done.returncode == 0, done.stdout  # the failing test "passed"


@pytest.mark.parametrize("folder", ["x-1.0.dist-info", "x.egg-info"])
def test_a_plugin_the_change_adds_fails_naming_its_metadata(tmp_path: Path, folder: str) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    plant_plugin(root, folder)
    result = _run_suite(root, tmp_path / "home")

    assert not result.passed and result.stages == (SHADOW_CHECK,)
    assert f"{folder}/entry_points.txt: added, a distribution's metadata" in result.report


def test_plugins_asked_before_the_worktree_exists_are_the_ones_a_later_probe_finds(
    tmp_path: Path,
) -> None:
    # `ssw run` asks while the worktree is made (ADR 0084): the same answer, and no thread left.
    python = environment_with_plugin(tmp_path / "env")
    tree = tmp_path / "worktree"
    ask_plugins_early(python, tree)
    tree.mkdir()
    early = declared_plugins(python, tree)

    assert early["declared"][0] == "declared_plugin"
    assert early == ask_environment(python, tree)["plugins"]  # asked afresh, now
    assert "ssw-interpreter-probe" not in [t.name for t in threading.enumerate()]


def test_the_preflight_collection_loads_the_declared_plugins(tmp_path: Path) -> None:
    # A marker the declared plugin registers, under --strict-markers: collection fails without it.
    python = environment_with_plugin(tmp_path / "env")
    strict = '[tool.pytest.ini_options]\naddopts = "--strict-markers"\n'
    marked = "import pytest\n\n@pytest.mark.declared_marker\ndef test_marked():\n    pass\n"
    files = {**USES_DECLARED, "pyproject.toml": strict, "tests/test_marked.py": marked}
    root = write_repo(tmp_path / "repo", files, commit=True)
    suite = _suite(root, tmp_path / "home", python)
    gate = suite.config.gates[0]
    assert isinstance(gate, TestsGate)
    try:
        collected = suite.collect_tests(gate, "tests:collect")
    finally:
        suite.close()

    assert collected.passed, collected.log


def test_a_command_gate_that_starts_pytest_loads_no_plugin_the_tree_carries(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    plant_plugin(root, "x-1.0.dist-info")
    commit_all(root)  # the plugin is the base commit's: the pre-checks leave it to pytest
    gate = CommandGate(
        name="doctests", command=f"{sys.executable} -m pytest -q -p no:cacheprovider"
    )
    interpreter = Interpreter(Path(sys.executable), "the test's")
    suite = GateSuite(
        GateConfig((gate,), "test"), root, scratch_env(tmp_path / "home"), interpreter=interpreter
    )

    result = suite.run(None)

    assert not result.passed and result.stages == ("doctests",)
    assert "test_add" in result.report
