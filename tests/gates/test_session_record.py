"""A test stage passes only when what pytest itself saw agrees with the status it exited with
(gates/session_record.py): a test module the change adds that calls `os._exit(0)` at import, or
a conftest.py in the test folders that sets the session's exit status to 0, fail the gates on a
broken change, naming the cause; a control shows plain pytest exiting 0 on the same tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.cli.gates import gates_command
from tests.gates import scratch_env
from tests.harness.repo import write_repo

FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\ntestpaths = ["tests"]\n',
}
BROKEN = "def add(a, b):\n    return a - b\n"
EXIT_AT_IMPORT = "import os\n\nos._exit(0)\n"
STATUS_TO_ZERO = "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n"
ROUTES = {
    "os._exit(0) in a new test module": ("tests/test_zz_exit.py", EXIT_AT_IMPORT),
    "a test-folder conftest.py setting the status to 0": ("tests/conftest.py", STATUS_TO_ZERO),
}
WHY = {
    "os._exit(0) in a new test module": "pytest exited 0 but ended before its session did",
    "a test-folder conftest.py setting the status to 0": "the exit status was changed after",
}


def _plain_pytest(root: Path) -> int:
    env = scratch_env(root, PYTHONDONTWRITEBYTECODE="1")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, check=False).returncode


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_pytest_that_exits_0_against_its_own_session_fails_the_gates(
    tmp_path: Path, route: str
) -> None:
    root = write_repo(tmp_path, FILES, commit=True)
    (root / "calc" / "ops.py").write_text(BROKEN)
    rel, text = ROUTES[route]
    (root / rel).write_text(text)
    assert _plain_pytest(root) == 0  # the control: pytest alone reports a pass

    report, code = gates_command(root, ["calc/ops.py", rel])

    assert code == 1, report
    assert "verdict: FAILED at tests" in report
    assert WHY[route] in report


def test_a_correct_change_with_a_new_test_folder_conftest_still_passes(tmp_path: Path) -> None:
    root = write_repo(tmp_path, FILES, commit=True)
    (root / "calc" / "ops.py").write_text("def add(a, b):\n    return b + a\n")
    (root / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n"
    )

    report, code = gates_command(root, ["calc/ops.py", "tests/conftest.py"])

    assert code == 0, report
    assert "verdict: passed" in report
