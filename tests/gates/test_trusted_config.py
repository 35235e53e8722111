"""pytest's configuration in the tests gate is the base commit's, never the worktree's (ADR 0021).

Each way a change could rig pytest from the worktree (a root conftest.py that turns failures into
passes or ends the process with status 0 at import, `addopts = "-p plugin"` added to
pyproject.toml, a root pytest.ini) gives a broken change a failing verdict that names the cause,
inside every sandbox backend that runs here; a control shows the same tree rigs plain pytest. A
correct change that adds a conftest.py with a fixture inside tests/ still passes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import stepswitch
from stepswitch.errors import UsageError
from stepswitch.gates.base import BaseTree
from stepswitch.gates.config import TestsGate
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.test_config import TEST_CONFIG_CHECK, check_test_config, config_folder
from stepswitch.gates.tools import pytest_command
from stepswitch.util.sandbox import choose_sandbox
from tests.gates import confined_suite, scratch_env
from tests.harness.repo import write_repo
from tests.harness.rigs import PASS_ALL

CONFINING = ("bwrap", "unshare")
PACKAGE = Path(stepswitch.__file__).resolve().parent

BASE = {
    "pyproject.toml": """
        [project]
        name = "calc"
        version = "0"

        [tool.pytest.ini_options]
        testpaths = ["tests"]
        pythonpath = ["lib"]
    """,
    "lib/calc/__init__.py": "",
    "lib/calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": """
        from calc.ops import add

        def test_add():
            assert add(2, 3) == 5
    """,
}
BROKEN = {"lib/calc/ops.py": "def add(a, b):\n    return a - b\n"}

EXIT_AT_IMPORT = "import os\n\nos._exit(0)\n"
ADDOPTS = BASE["pyproject.toml"].replace("testpaths", 'addopts = "-p rig"\n        testpaths')

# Each route: the files the rigged change writes beside the broken code.
ROUTES: dict[str, dict[str, str]] = {
    "root conftest passing failures": {"conftest.py": PASS_ALL},
    "root conftest exiting 0 at import": {"conftest.py": EXIT_AT_IMPORT},
    "pyproject addopts -p plugin": {"pyproject.toml": ADDOPTS, "rig.py": PASS_ALL},
    "root pytest.ini": {
        "pytest.ini": "[pytest]\npythonpath = lib\naddopts = -p rig\n",
        "rig.py": PASS_ALL,
    },
}


def _tree(tmp_path: Path, change: dict[str, str]) -> Path:
    root = write_repo(tmp_path / "repo", BASE, commit=True)
    return write_repo(root, change)


def _suite(
    tmp_path: Path, root: Path, backend: str, *, warm: bool = True, shown: bool = True
) -> GateSuite:
    """The tests gate as `ssw run` builds it: confined, ssw's package and the folder of the
    configuration copies read-only inside (agent/prepare.py), unless not `shown`."""
    try:
        sandbox = choose_sandbox(backend)
    except UsageError as exc:
        pytest.skip(f"{backend} does not run here: {exc}")
    read_only = (PACKAGE, config_folder()) if shown else (PACKAGE,)
    gate = TestsGate(name="tests", kind="tests", command=pytest_command(root), warm=warm)
    return confined_suite(tmp_path, root, gate, sandbox, read_only)


def _changed(change: dict[str, str]) -> list[str]:
    return sorted({*BROKEN, *change})


def _plain_pytest(root: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """The control: plain `python -m pytest` in the tree, as pytest itself configures it."""
    home.mkdir(parents=True, exist_ok=True)
    env = scratch_env(home, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_rigs_plain_pytest_in_the_same_tree(tmp_path: Path, route: str) -> None:
    root = _tree(tmp_path, {**BROKEN, **ROUTES[route]})

    done = _plain_pytest(root, tmp_path / "home")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed" not in done.stdout and "FAILED" not in done.stdout


@pytest.mark.parametrize("backend", CONFINING)
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_broken_change_rigging_pytest_from_the_worktree_fails_the_gates(
    tmp_path: Path, route: str, backend: str
) -> None:
    change = ROUTES[route]
    root = _tree(tmp_path, {**BROKEN, **change})
    suite = _suite(tmp_path, root, backend)

    result = suite.run(_changed(change), "HEAD")

    failed = result.failed
    assert failed is not None, result.report
    if "conftest.py" in change:
        assert failed.name == TEST_CONFIG_CHECK
        assert "conftest.py: added, outside the test folders (testpaths: tests)" in result.report
        assert not result.test_stages  # refused, never run
    else:
        assert failed.name.startswith("tests:")
        assert "FAILED tests/test_ops.py::test_add" in result.report
        rigged = "pytest.ini" if "pytest.ini" in change else "pyproject.toml"
        assert f"this change's {rigged} not read" in failed.log
        assert "pytest configuration: the base commit's pyproject.toml" in failed.log


@pytest.mark.parametrize("backend", CONFINING)
def test_a_correct_change_with_a_fixture_in_tests_conftest_passes(
    tmp_path: Path, backend: str
) -> None:
    change = {
        "lib/calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef neg(a):\n    return -a\n",
        "tests/conftest.py": """
            import pytest

            @pytest.fixture
            def three():
                return 3
        """,
        "tests/test_neg.py": """
            from pathlib import Path

            from calc.ops import neg

            def test_neg(three):
                assert neg(three) == -3

            def test_the_configuration_is_a_copy_the_tests_cannot_write(pytestconfig):
                inifile = Path(pytestconfig.inipath)
                assert not inifile.is_relative_to(pytestconfig.rootpath)
                try:
                    inifile.open("a").close()
                except OSError:
                    return
                raise AssertionError(f"{inifile} is writable from a test")
        """,
    }
    root = _tree(tmp_path, change)
    suite = _suite(tmp_path, root, backend)

    result = suite.run(sorted(change), "HEAD")

    assert result.passed, result.report
    assert TEST_CONFIG_CHECK not in result.stages
    assert result.full_ran


@pytest.mark.slow
def test_warm_and_fresh_test_stages_give_the_same_verdict(tmp_path: Path) -> None:
    change = {**BROKEN, **ROUTES["root pytest.ini"]}
    verdicts = []
    for warm in (True, False):
        root = _tree(tmp_path / str(warm), change)
        result = _suite(tmp_path / str(warm), root, "bwrap", warm=warm).run(_changed(change))
        assert [s.warm for s in result.test_stages] == [warm] * len(result.test_stages)
        verdicts.append([(s.name, s.passed, s.first_failure) for s in result.test_stages])
    assert verdicts[0] == verdicts[1]
    # Every test file imports the change: no impacted stage, the full suite at once (ADR 0076).
    assert verdicts[0][0] == ("tests:full", False, "tests/test_ops.py::test_add")


def test_a_sandbox_that_does_not_show_the_copies_gets_one_per_stage(tmp_path: Path) -> None:
    change = {**BROKEN, **ROUTES["root pytest.ini"]}
    root = _tree(tmp_path, change)
    suite = _suite(tmp_path, root, "bwrap", shown=False)

    result = suite.run(_changed(change))

    failed = result.failed
    assert failed is not None and "FAILED tests/test_ops.py::test_add" in result.report
    assert f"from {tmp_path / 'home' / 'tmp'}/ssw-stage-" in failed.log


# -- which conftest.py files a change may add ---------------------------------------------------


def _check(root: Path) -> list[str]:
    result = check_test_config(BaseTree.find(root), root, "HEAD")
    assert result is not None
    return [] if result.passed else result.report.splitlines()[1:-1]


def test_a_conftest_inside_the_test_folders_is_the_changes_to_make(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tests/conftest.py": "", "tests/unit/conftest.py": ""})
    assert _check(root) == []


def test_a_conftest_in_a_package_folder_is_refused(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"lib/calc/conftest.py": PASS_ALL})
    assert _check(root) == [
        "lib/calc/conftest.py: added, outside the test folders (testpaths: tests)"
    ]


def test_a_root_conftest_git_is_told_to_ignore_is_refused_all_the_same(tmp_path: Path) -> None:
    root = _tree(tmp_path, {".gitignore": "conftest.py\n", "conftest.py": PASS_ALL})
    assert _check(root) == ["conftest.py: added, outside the test folders (testpaths: tests)"]


def test_the_base_commits_root_conftest_may_be_neither_edited_nor_deleted(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", {**BASE, "conftest.py": "X = 1\n"}, commit=True)
    (root / "conftest.py").write_text(PASS_ALL)
    assert _check(root) == ["conftest.py: edited, outside the test folders (testpaths: tests)"]
    (root / "conftest.py").unlink()
    assert _check(root) == ["conftest.py: deleted, outside the test folders (testpaths: tests)"]


def test_without_testpaths_the_test_folders_are_those_holding_the_tests(tmp_path: Path) -> None:
    files = {
        "calc/__init__.py": "",
        "calc/ops.py": "def add(a, b):\n    return a + b\n",
        "calc/test_ops.py": "from calc.ops import add\n",
    }
    root = write_repo(tmp_path / "repo", files, commit=True)
    write_repo(root, {"calc/conftest.py": "", "conftest.py": ""})
    assert _check(root) == ["conftest.py: added, outside the test folders (calc)"]


def test_folders_pytest_never_collects_in_are_not_looked_into(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"build/lib/calc/conftest.py": "", ".venv/conftest.py": ""})
    assert _check(root) == []
