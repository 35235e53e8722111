from __future__ import annotations

from pathlib import Path

from stepswitch.gates import impacted as impacted_module
from stepswitch.gates.impacted import ImportGraph, impacted_tests, is_test_file, python_files
from tests.harness.repo import write_repo

FLAT = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "calc/helpers.py": "from calc.ops import add\n\ndef twice(x):\n    return add(x, x)\n",
    "calc/text.py": "def shout(s):\n    return s.upper()\n",
    "tests/test_ops.py": "from calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "tests/test_helpers.py": "from calc import helpers\n\ndef test_twice():\n    pass\n",
    "tests/test_text.py": "import calc.text\n\ndef test_shout():\n    pass\n",
}


def test_a_changed_module_impacts_the_tests_that_import_it(tmp_path: Path) -> None:
    write_repo(tmp_path, FLAT)
    assert impacted_tests(tmp_path, ["calc/text.py"]) == ["tests/test_text.py"]


def test_a_changed_module_impacts_tests_that_import_it_through_a_helper_module(
    tmp_path: Path,
) -> None:
    write_repo(tmp_path, FLAT)
    assert impacted_tests(tmp_path, ["calc/ops.py"]) == [
        "tests/test_helpers.py",
        "tests/test_ops.py",
    ]


def test_a_changed_test_file_is_impacted_itself(tmp_path: Path) -> None:
    write_repo(tmp_path, FLAT)
    assert impacted_tests(tmp_path, ["tests/test_text.py"]) == ["tests/test_text.py"]


def test_a_changed_conftest_impacts_the_tests_beside_and_below_it_only(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            **FLAT,
            "tests/unit/conftest.py": "import pytest\n",
            "tests/unit/test_one.py": "def test_one():\n    pass\n",
            "tests/unit/deeper/test_two.py": "def test_two():\n    pass\n",
        },
    )
    assert impacted_tests(tmp_path, ["tests/unit/conftest.py"]) == [
        "tests/unit/deeper/test_two.py",
        "tests/unit/test_one.py",
    ]


def test_a_module_a_conftest_imports_impacts_the_tests_under_that_conftest(
    tmp_path: Path,
) -> None:
    write_repo(
        tmp_path,
        {
            **FLAT,
            "tests/conftest.py": "from calc.text import shout\n",
        },
    )
    assert impacted_tests(tmp_path, ["calc/text.py"]) == [
        "tests/test_helpers.py",
        "tests/test_ops.py",
        "tests/test_text.py",
    ]


def test_relative_imports_inside_a_package_are_followed(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "pkg/__init__.py": "from .core import run\n",
            "pkg/core.py": "from . import util\nfrom .sub.deep import VALUE\n",
            "pkg/util.py": "X = 1\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/deep.py": "from ..util import X\nVALUE = X\n",
            "tests/test_pkg.py": "import pkg\n",
            "tests/test_other.py": "import json\n",
        },
    )
    assert impacted_tests(tmp_path, ["pkg/util.py"]) == ["tests/test_pkg.py"]


def test_a_src_layout_maps_modules_to_their_package_names(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "src/lib/__init__.py": "",
            "src/lib/core.py": "A = 1\n",
            "tests/test_core.py": "from lib.core import A\n",
            "tests/test_unrelated.py": "import os\n",
        },
    )
    assert impacted_tests(tmp_path, ["src/lib/core.py"]) == ["tests/test_core.py"]


def test_from_package_import_submodule_counts_as_importing_the_submodule(tmp_path: Path) -> None:
    write_repo(tmp_path, FLAT)
    assert "tests/test_helpers.py" in impacted_tests(tmp_path, ["calc/helpers.py"])


def test_a_literal_import_module_call_counts_as_an_import(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            **FLAT,
            "tests/test_dynamic.py": "import importlib\nm = importlib.import_module('calc.text')\n",
        },
    )
    assert impacted_tests(tmp_path, ["calc/text.py"]) == [
        "tests/test_dynamic.py",
        "tests/test_text.py",
    ]


def test_a_deleted_module_impacts_the_tests_that_still_import_it(tmp_path: Path) -> None:
    write_repo(tmp_path, FLAT)
    (tmp_path / "calc" / "text.py").unlink()
    assert impacted_tests(tmp_path, ["calc/text.py"]) == ["tests/test_text.py"]


def test_a_change_to_no_python_file_impacts_no_test(tmp_path: Path) -> None:
    write_repo(tmp_path, {**FLAT, "README.md": "hi\n"})
    assert impacted_tests(tmp_path, ["README.md", "data/values.json"]) == []


def test_virtual_environments_caches_and_git_are_not_read(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            **FLAT,
            ".venv/lib/test_inside_venv.py": "import calc.text\n",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/test_other_venv.py": "import calc.text\n",
            "build/test_built.py": "import calc.text\n",
            "pkg/build/test_real_package.py": "import calc.text\n",
        },
    )
    files = python_files(tmp_path)
    assert not any(f.startswith((".venv/", "env/", "build/")) for f in files)
    assert "pkg/build/test_real_package.py" in files


def test_a_file_that_does_not_parse_still_shows_the_imports_it_has(tmp_path: Path) -> None:
    write_repo(
        tmp_path, {**FLAT, "tests/test_broken.py": "import calc.text\ndef broken(:\n    pass\n"}
    )
    assert "tests/test_broken.py" in impacted_tests(tmp_path, ["calc/text.py"])


def test_multiline_parenthesised_imports_are_read(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            **FLAT,
            "tests/test_multi.py": "from calc.ops import (\n    add,  # sum\n    add as p,\n)\n",
        },
    )
    assert "tests/test_multi.py" in impacted_tests(tmp_path, ["calc/ops.py"])


def test_test_files_are_named_test_star_or_star_test() -> None:
    assert is_test_file("tests/test_a.py")
    assert is_test_file("pkg/a_test.py")
    assert not is_test_file("tests/helpers.py")
    assert not is_test_file("tests/test_data.json")


def test_a_large_repository_is_parsed_once_and_later_only_the_changed_file_again(
    tmp_path: Path,
) -> None:
    # What keeps a query fast (no wall-clock assertion on a shared machine): each file is
    # parsed once, and a later query re-parses only the files that changed since.
    files = {"app/__init__.py": ""}
    for i in range(900):
        body = "import os\nimport json\n" + (f"from app.m{i - 1} import f{i - 1}\n" if i else "")
        body += "".join(f"\ndef f{i}_{k}(x):\n    return x + {k}\n" for k in range(20))
        body += f"\ndef f{i}(x):\n    return x\n"
        files[f"app/m{i}.py"] = body
    for i in range(100):
        files[f"tests/test_t{i}.py"] = f"from app.m{i * 9} import f{i * 9}\n"
    write_repo(tmp_path, files)
    impacted_module._CACHE.clear()
    found = impacted_tests(tmp_path, ["app/m450.py"])
    # m450 is imported by m451 ... m899 in a chain, so by the tests of m450 and above.
    assert found == sorted(f"tests/test_t{i}.py" for i in range(50, 100))
    assert len(impacted_module._CACHE) == 1001
    before = {k: v[2] for k, v in impacted_module._CACHE.items()}
    (tmp_path / "app" / "m7.py").write_text("import os\n\nX = 1\n", encoding="utf-8")
    impacted_tests(tmp_path, ["app/m7.py"])
    reparsed = [k for k, v in impacted_module._CACHE.items() if v[2] is not before[k]]
    assert reparsed == [str(tmp_path / "app" / "m7.py")]


def test_module_names_cover_the_package_path_and_the_path_from_the_root(tmp_path: Path) -> None:
    write_repo(tmp_path, FLAT)
    graph = ImportGraph(tmp_path)
    assert graph.module_names("calc/ops.py") == {"calc.ops"}
    assert graph.module_names("tests/test_ops.py") == {"test_ops", "tests.test_ops"}
    assert graph.module_names("calc/__init__.py") == {"calc"}


def test_a_conftest_two_hops_away_puts_its_tests_in_the_wider_ring(tmp_path: Path) -> None:
    from stepswitch.gates.impacted import impacted_tiers

    write_repo(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/core.py": "X = 1\n",
            "pkg/markers.py": "from pkg.core import X\n",
            "tests/conftest.py": "import pkg.markers\n",
            "tests/test_core.py": "from pkg.core import X\n\ndef test_x():\n    assert X\n",
            "tests/test_unrelated.py": "def test_u():\n    pass\n",
        },
    )
    nearest, wider, total = impacted_tiers(tmp_path, ["pkg/core.py"])
    assert nearest == ["tests/test_core.py"]
    assert wider == ["tests/test_unrelated.py"]
    assert total == 2
    # A change the conftest imports directly puts every test under it in the nearest ring.
    nearest, wider, _ = impacted_tiers(tmp_path, ["pkg/markers.py"])
    assert sorted(nearest) == ["tests/test_core.py", "tests/test_unrelated.py"]
