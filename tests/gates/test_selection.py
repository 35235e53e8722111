"""The impacted stages select with pytest's own collection: the project's python_files,
testpaths and conftest hooks apply; renamed modules select their old importers."""

from __future__ import annotations

from pathlib import Path

from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.impacted import ImportGraph
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from stepswitch.util.env import clean_env
from tests.harness.repo import git, write_repo

BASE = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",  # broken
    "calc/text.py": "def shout(s):\n    return s.upper()\n",
}
# A test file that does not import calc.ops: a change to it impacts some test files, not all
# (an impacted stage of every test file is skipped: ADR 0076).
TEXT_TEST = "from calc.text import shout\n\ndef test_shout():\n    assert shout('a') == 'A'\n"


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
            "tests/check_text.py": TEXT_TEST,
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
            "tests/test_text.py": TEXT_TEST,
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
        commit=True,
    )
    git(tmp_path, "mv", "calc/ops.py", "calc/arith.py")
    # The caller's list is only the new name (or a mangled old one): git completes it.
    result = suite(tmp_path).run(["calc/arith.py", "alc/ops.py"])
    assert result.stages == ("tests:impacted",)
    assert "tests/test_ops.py" in result.impacted


def test_within_a_ring_files_run_by_cost_over_how_likely_they_are_to_fail(
    tmp_path: Path,
) -> None:
    # conftest -> _common -> tz puts every test in the nearest ring (dateutil's layout): the test
    # named after tz, then the other direct importer, run before the test only the conftest
    # reaches, although they are slower, unless they are much slower (Smith's rule).
    write_repo(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/tz/__init__.py": "from .tz import UTC\n",
            "src/pkg/tz/tz.py": "UTC = 0\n",
            "src/pkg/rrule.py": "X = 1\n",
            "tests/__init__.py": "",
            "tests/_common.py": "from pkg import tz\n",
            "tests/conftest.py": "from ._common import *\n",
            "tests/test_a_other.py": "def test_o():\n    pass\n",
            "tests/test_b_rrule.py": "from pkg.tz import tz\nfrom pkg import rrule\n",
            "tests/test_tz.py": "from pkg.tz import tz\n",
        },
    )
    graph = ImportGraph(tmp_path)
    seconds = {"tests/test_tz.py": 1.6, "tests/test_b_rrule.py": 0.9, "tests/test_a_other.py": 0.4}
    nearest, wider = graph.impacted_tiers(["src/pkg/tz/tz.py"], seconds)
    assert nearest == ["tests/test_tz.py", "tests/test_b_rrule.py", "tests/test_a_other.py"]
    assert wider == []
    slow = {**seconds, "tests/test_tz.py": 20.0}
    assert graph.impacted_tiers(["src/pkg/tz/tz.py"], slow)[0][-1] == "tests/test_tz.py"
    links = graph.links(["src/pkg/tz/tz.py"])
    assert links["tests/test_b_rrule.py"] == 1 and links["tests/test_a_other.py"] == 4


def test_the_test_named_after_the_module_runs_alone_first_when_its_ring_is_large(
    tmp_path: Path,
) -> None:
    # A conftest that imports the module puts every test in the nearest ring: test_ops.py, named
    # after ops.py, is collected and run alone first; it fails, so nothing else runs yet.
    files = {
        **BASE,
        "tests/__init__.py": "",
        "tests/conftest.py": "from calc import ops\n",
        "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n"
        "    assert add(1, 2) == 3\n",
    }
    for name in ("a", "b", "c"):
        files[f"tests/test_{name}.py"] = "def test_x():\n    pass\n"
    write_repo(tmp_path, files)
    result = suite(tmp_path).run(["calc/ops.py"])
    assert result.stages == ("tests:impacted-named",)
    assert result.test_stages[0].files == 2  # test_ops.py and the changed module itself
    assert result.test_stages[0].first_failure == "tests/test_ops.py::test_add"
    assert len(result.impacted) == 4


def test_when_the_named_test_passes_the_rest_of_its_ring_runs_next_then_the_full_suite(
    tmp_path: Path,
) -> None:
    files = {
        **BASE,
        "tests/__init__.py": "",
        "tests/conftest.py": "from calc import ops\n",
        "tests/test_ops.py": "def test_fine():\n    pass\n",
    }
    for name in ("a", "b"):
        files[f"tests/test_{name}.py"] = "def test_x():\n    pass\n"
    files["tests/test_c.py"] = (
        "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    files["more/test_text.py"] = TEXT_TEST  # outside the conftest's folder: not in the ring
    write_repo(tmp_path, files)
    result = suite(tmp_path).run(["calc/ops.py"])
    assert result.stages == ("tests:impacted-named", "tests:impacted")
    assert [s.files for s in result.test_stages] == [2, 3]
    assert result.test_stages[1].first_failure == "tests/test_c.py::test_add"
