"""The impacted stages select with pytest's own collection: the project's python_files,
testpaths and conftest hooks apply; renamed modules select their old importers."""

from __future__ import annotations

from pathlib import Path

from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.impacted import ImportGraph
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from stepswitch.util.env import clean_env
from tests.gates import run_git, write_repo

BASE = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",  # broken
    "calc/text.py": "def shout(s):\n    return s.upper()\n",
}


def suite(root: Path) -> GateSuite:
    gate = TestsGate(name="tests", kind="tests", command=pytest_command(root), timeout_s=120.0)
    return GateSuite(GateConfig((gate,), "test"), root, clean_env())


def test_files_named_by_the_projects_python_files_are_selected_and_run(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            **BASE,
            "pyproject.toml": '[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n',
            "tests/check_ops.py": "from calc.ops import add\n\ndef test_add():\n"
            "    assert add(1, 2) == 3\n",
        },
    )
    result = suite(tmp_path).run(["calc/ops.py"])
    assert result.stages == ("tests:impacted",)
    assert result.test_stages[0].first_failure == "tests/check_ops.py::test_add"


def test_a_conftest_collection_hook_applies_in_the_impacted_stage(tmp_path: Path) -> None:
    # The hook marks every test to skip: the impacted stage passes as the full suite would.
    write_repo(
        tmp_path,
        {
            **BASE,
            "tests/conftest.py": "import pytest\n\ndef pytest_collection_modifyitems(items):\n"
            "    for item in items:\n        item.add_marker(pytest.mark.skip('hook'))\n",
            "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n"
            "    assert add(1, 2) == 3\n",
        },
    )
    result = suite(tmp_path).run(["calc/ops.py"])
    assert result.passed and result.stages == ("tests:impacted", "tests:full")


def test_a_test_file_outside_testpaths_is_neither_selected_nor_run(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            **BASE,
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
            "scratch/test_old.py": "from calc.ops import add\n\ndef test_old():\n    assert 0\n",
            "tests/test_text.py": "from calc.text import shout\n\ndef test_s():\n"
            "    assert shout('a') == 'A'\n",
        },
    )
    assert ImportGraph(tmp_path).test_files() == ["tests/test_text.py"]
    assert suite(tmp_path).run(["calc/ops.py"]).passed


def test_tests_reached_through_a_helper_or_a_reexport_are_in_the_nearest_ring(
    tmp_path: Path,
) -> None:
    write_repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/parser/__init__.py": "from ._parser import parse\n",
            "pkg/parser/_parser.py": "def parse(s):\n    return s\n",
            "pkg/checker.py": "X = 1\n",
            "pkg/test/__init__.py": "",
            "pkg/test/harness.py": "from pkg import checker\n",
            "pkg/test/test_checks.py": "from pkg.test.harness import checker\n",
            "pkg/test/test_parse.py": "from pkg.parser import parse\n",
        },
    )
    graph = ImportGraph(tmp_path)
    assert graph.impacted_tiers(["pkg/checker.py"])[0] == ["pkg/test/test_checks.py"]
    assert graph.impacted_tiers(["pkg/parser/_parser.py"])[0] == ["pkg/test/test_parse.py"]


def test_a_renamed_module_selects_the_tests_that_still_import_its_old_name(
    tmp_path: Path,
) -> None:
    write_repo(
        tmp_path,
        {
            **BASE,
            "calc/ops.py": "def add(a, b):\n    return a + b\n",
            "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n"
            "    assert add(1, 2) == 3\n",
            "tests/test_text.py": "def test_t():\n    pass\n",
        },
        git=True,
    )
    run_git(tmp_path, "mv", "calc/ops.py", "calc/arith.py")
    # The caller's list is only the new name (or a mangled old one): git completes it.
    result = suite(tmp_path).run(["calc/arith.py", "alc/ops.py"])
    assert result.stages == ("tests:impacted",)
    assert "tests/test_ops.py" in result.impacted
