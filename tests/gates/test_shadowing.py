"""A module the change adds at the tree's root that would be imported instead of the standard
library's or an installed distribution's (pytest's own `iniconfig`, say) is a failing verdict
naming it, before any test runs; the project's own root modules of the base commit are not.
The control shows the route is real: plain pytest in such a tree reports a pass for a failing
test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.shadowing import SHADOW_CHECK, twin_modules
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from tests.harness.repo import write_repo

FAILING = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
# Loaded by pytest at start-up, before any test: the exit status it leaves is what ssw reads.
FORCE_PASS = "import os\nos._exit(0)\n"


def _suite(root: Path) -> GateSuite:
    gate = TestsGate(name="tests", kind="tests", command=pytest_command(root), timeout_s=120.0)
    return GateSuite(GateConfig((gate,), "test"), root, dict(os.environ), None)


@pytest.mark.parametrize(
    ("name", "shadows"),
    [
        ("iniconfig.py", "module iniconfig of the installed iniconfig"),
        ("argparse.py", "the standard library's module argparse"),
        ("pluggy/__init__.py", "module pluggy of the installed pluggy"),
    ],
)
def test_an_added_root_module_that_shadows_what_pytest_imports_fails_naming_it(
    tmp_path: Path, name: str, shadows: str
) -> None:
    root = write_repo(tmp_path, FAILING, commit=True)
    suite = _suite(root)
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(FORCE_PASS)

    result = suite.run(None)

    assert not result.passed and result.stages == (SHADOW_CHECK,)
    assert f"{name.split('/')[0]}: added, and shadows {shadows}" in result.report


def test_a_root_module_of_the_base_commit_is_the_projects_own(tmp_path: Path) -> None:
    # Many projects keep a `test/` package at the root; the standard library has one too.
    files = {**FAILING, "test/__init__.py": "", "calc/ops.py": "def add(a, b):\n    return a + b\n"}
    root = write_repo(tmp_path, files, commit=True)

    result = _suite(root).run(None)

    assert result.passed, result.report


def test_control_plain_pytest_reports_a_pass_when_iniconfig_is_shadowed(tmp_path: Path) -> None:
    root = write_repo(tmp_path, {**FAILING, "iniconfig.py": FORCE_PASS})
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0  # the failing test never ran


def test_a_package_beside_a_module_of_its_name_is_found_only_when_the_change_made_the_pair(
    tmp_path: Path,
) -> None:
    for rel in ("pkg/stats.py", "pkg/stats/__init__.py", "pkg/old.py", "pkg/old/__init__.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    base = {"pkg/stats.py", "pkg/old.py", "pkg/old/__init__.py"}

    found = twin_modules(tmp_path, ["pkg/stats/__init__.py", "pkg/old.py"], base)

    assert found == [
        "pkg/stats/: a package beside the module pkg/stats.py: Python imports the package, so "
        "pkg/stats.py is not what runs"
    ]
