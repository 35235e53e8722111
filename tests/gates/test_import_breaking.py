"""`ssw gates --changed` on a change that makes the package fail to import: the tests' failing
verdict (exit 1), not a set-up error (exit 2); the pre-flight's import check belongs to the
untouched start, which still refuses a set-up that cannot import the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.cli.gates import gates_command
from stepswitch.errors import UsageError
from tests.harness.repo import write_repo

FILES = {
    "calc/__init__.py": "from calc.helpers import twice\n",
    "calc/helpers.py": "def twice(x):\n    return 2 * x\n",
    "tests/test_calc.py": "from calc import twice\n\ndef test_twice():\n    assert twice(2) == 4\n",
}


def test_a_change_that_breaks_the_import_is_a_failing_verdict(tmp_path: Path) -> None:
    root = write_repo(tmp_path, FILES, commit=True)
    (root / "calc" / "helpers.py").write_text("import no_such_build_helper\n")

    text, code = gates_command(root, ["calc/helpers.py"])

    assert code == 1
    assert "the change breaks the import the untouched start passes" in text
    assert "FAILED at tests" in text


def test_a_start_that_cannot_import_is_still_a_set_up_error(tmp_path: Path) -> None:
    files = {**FILES, "calc/helpers.py": "import no_such_dependency\n"}
    root = write_repo(tmp_path, files, commit=True)
    (root / "tests" / "test_more.py").write_text("def test_more():\n    pass\n")

    with pytest.raises(UsageError, match="install the project's dependencies"):
        gates_command(root, ["tests/test_more.py"])
