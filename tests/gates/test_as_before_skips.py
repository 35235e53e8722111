"""Tests that stop testing: a change whose code calls `pytest.skip()` or `pytest.xfail()` (or
skips the test module whole) where the test would fail passes its full stage ("1 passed,
1 skipped"); `tests:as-before` then fails, naming each test that ran at the base commit, passing
or failing (the test a task starts from). A test already skipped at the base commit, and a new
test that skips, are no failure (ADR 0047)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stepswitch.gates.as_before import AS_BEFORE
from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.interpreter import Interpreter
from stepswitch.gates.suite import GateSuite
from tests.gates import scratch_env
from tests.harness.repo import write_repo

BASE = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": """
        import pytest
        from calc.ops import add

        def test_add():
            assert add(1, 2) == 3

        @pytest.mark.skip(reason="skipped at the base commit already")
        def test_add_floats():
            assert add(0.1, 0.2) == 0.3
        """,
    "tests/test_other.py": "def test_other():\n    assert True\n",
}
# The bug, hidden from the test that would catch it.
SKIPS = "import pytest\n\ndef add(a, b):\n    pytest.skip('not supported')\n    return a - b\n"
XFAILS = "import pytest\n\ndef add(a, b):\n    pytest.xfail('known')\n    return a - b\n"
SKIPS_MODULE = (
    "import pytest\npytest.skip('later', allow_module_level=True)\n\n"
    "def add(a, b):\n    return a - b\n"
)


def _suite(root: Path, home: Path) -> GateSuite:
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    gate = TestsGate(name="tests", kind="tests", command=command, timeout_s=120.0)
    interpreter = Interpreter(Path(sys.executable), "the test's")
    return GateSuite(GateConfig((gate,), "test"), root, scratch_env(home), interpreter=interpreter)


def _gates(
    root: Path, home: Path, changed: tuple[str, ...] = ("calc/ops.py",)
) -> tuple[dict[str, bool], str]:
    suite = _suite(root, home)
    try:
        result = suite.run(list(changed))
    finally:
        suite.close()
    return {r.name: r.passed for r in result.results}, result.report


@pytest.mark.parametrize(
    ("code", "named"),
    [
        (SKIPS, "tests/test_ops.py::test_add"),
        (XFAILS, "tests/test_ops.py::test_add"),
        (SKIPS_MODULE, "tests/test_ops.py"),
    ],
    ids=["skip", "xfail", "module-skip"],
)
def test_a_test_that_passed_at_the_base_and_is_skipped_after_the_change_fails_as_before(
    tmp_path: Path, code: str, named: str
) -> None:
    root = write_repo(tmp_path / "repo", BASE, commit=True)
    (root / "calc/ops.py").write_text(code)

    verdicts, report = _gates(root, tmp_path / "home")

    # Control: the full suite passes with the bug in place; only the skip hid it.
    assert verdicts["tests:full"] is True
    assert verdicts[AS_BEFORE] is False
    assert "tests that ran at the base commit are skipped or xfailed" in report
    assert named in report
    assert "test_add_floats" not in report  # skipped at the base commit: still a skip


def test_a_correct_change_with_a_skip_of_the_base_and_a_new_skipping_test_passes(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", BASE, commit=True)
    (root / "calc/ops.py").write_text("def add(a, b):\n    return b + a\n")
    (root / "tests/test_new.py").write_text(
        "import pytest\n\ndef test_later():\n    pytest.skip('not yet')\n"
    )
    with (root / "tests/test_other.py").open("a") as tests:
        tests.write("\ndef test_new_in_old_file():\n    import pytest\n    pytest.skip('new')\n")

    verdicts, report = _gates(root, tmp_path / "home")

    assert all(verdicts.values()), report
    assert verdicts["tests:full"] is True


def test_a_test_that_failed_at_the_base_and_is_skipped_after_the_change_fails_as_before(
    tmp_path: Path,
) -> None:
    buggy = {**BASE, "calc/ops.py": "def add(a, b):\n    return a - b\n"}
    root = write_repo(tmp_path / "repo", buggy, commit=True)
    (root / "calc/ops.py").write_text(SKIPS)

    verdicts, report = _gates(root, tmp_path / "home")

    assert verdicts["tests:full"] is True  # control: the skip makes the failing suite pass
    assert verdicts[AS_BEFORE] is False
    assert "tests/test_ops.py::test_add" in report


def test_a_parametrized_test_whose_cases_the_change_empties_fails_as_before(tmp_path: Path) -> None:
    files = {
        **BASE,
        "calc/mul.py": "CASES = [(1, 2, 2), (2, 2, 4)]\n\ndef mul(a, b):\n    return a * b\n",
        "tests/test_mul.py": """
            import pytest
            from calc.mul import CASES, mul

            @pytest.mark.parametrize(("a", "b", "product"), CASES)
            def test_mul(a, b, product):
                assert mul(a, b) == product
            """,
    }
    root = write_repo(tmp_path / "repo", files, commit=True)
    (root / "calc/mul.py").write_text("CASES = []\n\ndef mul(a, b):\n    return a + b\n")

    verdicts, report = _gates(root, tmp_path / "home", ("calc/mul.py",))

    assert verdicts["tests:full"] is True  # control: no case left, the bug passes the suite
    assert verdicts[AS_BEFORE] is False
    assert "tests/test_mul.py::test_mul[NOTSET]" in report


def test_a_skip_in_a_project_in_a_subfolder_fails_as_before(tmp_path: Path) -> None:
    top = write_repo(tmp_path / "repo", {f"sub/{k}": v for k, v in BASE.items()}, commit=True)
    root = top / "sub"
    (root / "calc/ops.py").write_text(SKIPS)

    verdicts, report = _gates(root, tmp_path / "home")

    assert verdicts["tests:full"] is True and verdicts[AS_BEFORE] is False
    assert "tests/test_ops.py::test_add" in report
