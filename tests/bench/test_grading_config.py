"""Grading takes pytest's configuration from the task's start, never from the graded tree (ADR
0021): a tree that adds tox.ini, setup.cfg or pytest.toml with `addopts = -p <its plugin>` to a
task whose start has no pytest table, or a root conftest.py, still gets the hidden tests' failing
verdict, under every sandbox backend that runs here; a control shows the same files rig plain
pytest in the laid-out grading folder. Relative paths in the start's configuration keep meaning
what they meant in the start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stepswitch.bench.grading_folder import grade
from stepswitch.bench.grading_layout import TreeRefused, lay_out
from stepswitch.bench.task import HIDDEN_FOLDER, Task, load_task
from stepswitch.errors import UsageError
from stepswitch.util.sandbox import Sandbox, choose_sandbox
from tests.harness.rigs import PASS_ALL

from . import BUGGY, FIXED, write_task

BACKENDS = ("none", "bwrap", "unshare")
# The files each route adds to a tree whose calc.py is still the buggy start.
ROUTES: dict[str, dict[str, str]] = {
    "tox.ini addopts": {"tox.ini": "[pytest]\naddopts = -p rig\n", "rig.py": PASS_ALL},
    "setup.cfg addopts": {"setup.cfg": "[tool:pytest]\naddopts = -p rig\n", "rig.py": PASS_ALL},
    "pytest.toml addopts": {
        "pytest.toml": '[pytest]\naddopts = ["-p", "rig"]\n',
        "rig.py": PASS_ALL,
    },
}
NO_PYTEST_TABLE = '[project]\nname = "calc"\nversion = "0"\n'


def _backend(name: str) -> Sandbox | None:
    if name == "none":
        return None
    try:
        return choose_sandbox(name)
    except UsageError as exc:
        pytest.skip(f"{name} does not run here: {exc}")


def _task(tmp_path: Path, files: dict[str, str | bytes | None] | None = None) -> Task:
    """A task whose start has no [tool.pytest] table, unless `files` say otherwise."""
    chosen: dict[str, str | bytes | None] = {"repo/pyproject.toml": NO_PYTEST_TABLE}
    return load_task(write_task(tmp_path / "tasks", files={**chosen, **(files or {})}))


def _tree(task: Task, tmp_path: Path, files: dict[str, str]) -> Path:
    """The start with `files` written over it (the agent's committed tree)."""
    tree = tmp_path / "tree"
    shutil.copytree(task.repo, tree)
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(textwrap.dedent(text).lstrip("\n"))
    return tree


def _plain_pytest(task: Task, folder: Path) -> subprocess.CompletedProcess[str]:
    """The control: the task's own command in `folder`, as pytest itself configures it."""
    command = [sys.executable if w == "python" else w for w in task.command]
    env = {"PATH": os.environ["PATH"], "HOME": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_survives_the_layout_and_rigs_plain_pytest(tmp_path: Path, route: str) -> None:
    task = _task(tmp_path)
    folder = tmp_path / "grading"
    lay_out(task, _tree(task, tmp_path, ROUTES[route]), folder)

    done = _plain_pytest(task, folder)

    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_tree_that_configures_pytest_itself_is_graded_as_failing(
    tmp_path: Path, route: str, backend: str
) -> None:
    sandbox = _backend(backend)
    task = _task(tmp_path)
    tree = _tree(task, tmp_path, ROUTES[route])
    (tmp_path / "scratch").mkdir()

    verdict = grade(task, tree, tmp_path / "scratch", sandbox)

    assert not verdict.passed and verdict.failed, verdict.output
    assert verdict.failing == (f"{HIDDEN_FOLDER}.test_hidden::test_add",)
    assert verdict.summary() == "1 failed"


def test_a_root_conftest_rigs_plain_pytest_in_the_tree_but_not_the_grade(tmp_path: Path) -> None:
    task = _task(tmp_path)
    tree = _tree(task, tmp_path, {"conftest.py": PASS_ALL})
    shutil.copytree(task.hidden_tests, tree / HIDDEN_FOLDER)
    assert _plain_pytest(task, tree).returncode == 0  # the control: rigged without the layout
    shutil.rmtree(tree / HIDDEN_FOLDER)
    (tmp_path / "scratch").mkdir()

    verdict = grade(task, tree, tmp_path / "scratch")

    assert not verdict.passed and verdict.failed and verdict.summary() == "1 failed"
    assert "removed conftest.py" in lay_out(task, tree, tmp_path / "laid-out")


@pytest.mark.parametrize("backend", BACKENDS)
def test_relative_paths_of_the_starts_configuration_keep_their_meaning(
    tmp_path: Path, backend: str
) -> None:
    sandbox = _backend(backend)
    config = '[tool.pytest.ini_options]\npythonpath = ["lib"]\ntestpaths = ["tests"]\n'
    task = _task(
        tmp_path,
        {"repo/pyproject.toml": config, "repo/calc.py": None, "repo/lib/calc.py": BUGGY},
    )
    tree = _tree(task, tmp_path, {"lib/calc.py": FIXED})
    (tmp_path / "scratch").mkdir()

    verdict = grade(task, tree, tmp_path / "scratch", sandbox)

    assert verdict.passed, verdict.output


# Imported by pytest itself before any test (`python -m pytest` puts the folder first on
# sys.path): sets PYTEST_ADDOPTS to load the rig, then hands over to the real module.
SHIM = """
import os
import sys

os.environ["PYTEST_ADDOPTS"] = "-p rig"
here = os.path.dirname(os.path.abspath(__file__))
kept = list(sys.path)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
del sys.modules[__name__]
sys.modules[__name__] = __import__(__name__)
sys.path[:] = kept
"""


@pytest.mark.parametrize("name", ["iniconfig", "argparse"])
def test_a_root_module_shadowing_one_pytest_imports_is_refused_naming_it(
    tmp_path: Path, name: str
) -> None:
    task = _task(tmp_path)
    files = {f"{name}.py": SHIM, "rig.py": PASS_ALL}
    tree = _tree(task, tmp_path, files)
    control = tmp_path / "control"
    shutil.copytree(tree, control)
    shutil.copytree(task.hidden_tests, control / HIDDEN_FOLDER)
    rigged = _plain_pytest(task, control)
    assert rigged.returncode == 0 and "1 passed" in rigged.stdout, rigged.stdout + rigged.stderr
    (tmp_path / "scratch").mkdir()

    with pytest.raises(TreeRefused) as refused:
        grade(task, tree, tmp_path / "scratch")

    assert str(refused.value).startswith(f"{name}.py: added, and shadows ")


def test_a_root_module_the_start_already_holds_is_graded_as_usual(tmp_path: Path) -> None:
    task = _task(tmp_path, {"repo/test.py": "VALUE = 1\n"})  # `test` is a standard-library name
    tree = _tree(task, tmp_path, {"calc.py": FIXED})
    (tmp_path / "scratch").mkdir()

    assert grade(task, tree, tmp_path / "scratch").passed


def test_a_package_the_tree_adds_beside_the_graded_module_is_refused_naming_both(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path)
    tree = _tree(task, tmp_path, {"calc/__init__.py": FIXED})  # calc.py keeps the bug
    (tmp_path / "scratch").mkdir()

    with pytest.raises(TreeRefused) as refused:
        grade(task, tree, tmp_path / "scratch")

    assert str(refused.value) == (
        "calc/: a package beside the module calc.py: Python imports the package, so calc.py is "
        "not what runs"
    )
