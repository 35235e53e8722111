"""Tests keep their original meaning: a test the change weakened or deleted also runs as the base
commit has it, and fails the gates naming it; a change that keeps the test's meaning passes;
`test_changes = "allowed"` opts out (and shows the route: the weakened test passes then)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from stepswitch.gates.as_before import AS_BEFORE
from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from tests.harness.repo import write_repo
from tests.harness.rigs import PASS_ALL

BUGGY = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
WEAKENED = "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == -1\n"


def _suite(root: Path, **options: str) -> GateSuite:
    gate = TestsGate(name="tests", kind="tests", command=pytest_command(root), **options)
    return GateSuite(GateConfig((gate,), "test"), root, dict(os.environ))


def test_a_weakened_test_fails_as_the_base_commit_has_it(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    (root / "tests" / "test_ops.py").write_text(WEAKENED)

    result = _suite(root).run(["tests/test_ops.py"])

    assert not result.passed and result.stages[-1] == AS_BEFORE
    assert "tests/test_ops.py, which the change edited or deleted, fail" in result.report
    assert "test_add" in result.report
    assert (root / "tests" / "test_ops.py").read_text() == WEAKENED  # the worktree untouched


def test_a_weakened_test_of_a_project_in_a_subfolder_fails_as_the_base_commit_has_it(
    tmp_path: Path,
) -> None:
    # The check-out of a subfolder's tree holds its files at the copy's top (it once looked for
    # them under the subfolder's name there, and the gates ended with an internal error).
    top = write_repo(tmp_path / "repo", {f"sub/{k}": v for k, v in BUGGY.items()}, commit=True)
    root = top / "sub"
    (root / "tests" / "test_ops.py").write_text(WEAKENED)

    result = _suite(root).run(["tests/test_ops.py"])

    assert not result.passed and result.stages[-1] == AS_BEFORE
    assert "tests/test_ops.py, which the change edited or deleted, fail" in result.report


def test_a_deleted_test_folder_still_runs_as_the_base_commit_has_it(tmp_path: Path) -> None:
    files = {**BUGGY, "tests/test_more.py": "def test_more():\n    pass\n"}
    root = write_repo(tmp_path / "repo", files, commit=True)
    (root / "tests" / "test_ops.py").unlink()

    result = _suite(root).run(["tests/test_ops.py"])

    assert not result.passed and result.stages[-1] == AS_BEFORE


def test_a_fix_that_adds_to_a_test_passes_as_before_too(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    (root / "calc" / "ops.py").write_text("def add(a, b):\n    return a + b\n")
    with (root / "tests" / "test_ops.py").open("a") as test:
        test.write("\ndef test_add_zero():\n    assert add(0, 0) == 0\n")

    result = _suite(root).run(["calc/ops.py", "tests/test_ops.py"])

    assert result.passed, result.report
    assert result.stages[-1] == AS_BEFORE


def test_control_with_test_changes_allowed_the_weakened_test_passes(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    (root / "tests" / "test_ops.py").write_text(WEAKENED)

    result = _suite(root, test_changes="allowed").run(["tests/test_ops.py"])

    assert result.passed and AS_BEFORE not in result.stages


def test_a_test_folder_made_a_link_cannot_take_its_tests_back_and_fails(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "test_ops.py").write_text(WEAKENED)
    shutil.rmtree(root / "tests")
    (root / "tests").symlink_to(elsewhere)

    result = _suite(root).run(["tests"])

    assert not result.passed
    assert (elsewhere / "test_ops.py").read_text() == WEAKENED  # nothing written through it


def test_a_test_folder_conftest_that_rigs_the_reports_fails_as_the_base_commit_has_it(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", BUGGY, commit=True)
    (root / "tests" / "conftest.py").write_text(PASS_ALL)
    rigged = _suite(root, test_changes="allowed").run(["tests/conftest.py"])
    assert rigged.passed  # the control: under the new conftest.py the buggy code passes

    result = _suite(root).run(["tests/conftest.py"])

    assert not result.passed and result.stages[-1] == AS_BEFORE
    assert "or which run under tests/conftest.py the change added or edited" in result.report
    assert (root / "tests" / "conftest.py").read_text() == PASS_ALL  # the worktree untouched


def test_an_edited_test_folder_conftest_runs_as_the_base_commit_has_it(tmp_path: Path) -> None:
    files = {**BUGGY, "tests/conftest.py": "VALUE = 1\n"}
    root = write_repo(tmp_path / "repo", files, commit=True)
    (root / "tests" / "conftest.py").write_text(PASS_ALL)

    result = _suite(root).run(["tests/conftest.py"])

    assert not result.passed and result.stages[-1] == AS_BEFORE
