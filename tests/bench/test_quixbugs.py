"""`ssw bench import quixbugs DIR`: a QuixBugs checkout's programs become tasks graded by
QuixBugs' own Python tests (issue 46). The fixture is a small extract of QuixBugs (MIT, its
LICENSE beside it): a generator program (flatten), one whose tests skip a slow case (knapsack),
a graph program tested in Python with its Node class (breadth_first_search), and the helper and
driver files beside the programs that are not programs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stepswitch.bench.quixbugs import hidden_test
from stepswitch.bench.task import load_suite
from stepswitch.bench.validate import validate_tasks
from tests.harness.cli import run_ssw_cli

CHECKOUT = Path(__file__).resolve().parents[1] / "fixtures" / "third_party" / "quixbugs"


def test_a_quixbugs_checkout_imports_as_quixbugs_tests_it_and_every_task_validates(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    done = run_ssw_cli(["bench", "import", "quixbugs", str(CHECKOUT), "--out", str(suite)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("3 of 3 tasks written; check them with ssw bench validate\n")
    tasks = load_suite(suite)
    # The programs QuixBugs tests; node.py and the *_test.py driver are no tasks.
    assert [t.spec.id for t in tasks] == ["breadth-first-search", "flatten", "knapsack"]
    bfs, flatten, knapsack = tasks
    assert (bfs.hidden_tests / "node.py").is_file()
    hidden = (flatten.hidden_tests / "test_flatten.py").read_text()
    assert "from flatten import flatten" in hidden and "use_correct" not in hidden
    assert "assert list(flatten(*input_data)) == expected" in hidden  # QuixBugs' comparison
    # The case QuixBugs skips as slow is not in the data: it is never run, so never "skipped".
    source = (CHECKOUT / "json_testcases/knapsack.json").read_text().splitlines()
    kept = (knapsack.hidden_tests / "knapsack.json").read_text().splitlines()
    assert len(kept) == len(source) - 1
    assert all(json.loads(line)[0][0] != 6404180 for line in kept)
    verdicts = validate_tasks(tasks, jobs=2)
    assert [(v.task, v.valid, v.problem) for v in verdicts] == [
        ("suite/breadth-first-search", True, None),
        ("suite/flatten", True, None),
        ("suite/knapsack", True, None),
    ]


def test_a_skip_on_a_condition_it_cannot_read_refuses_that_program_only(tmp_path: Path) -> None:
    checkout = tmp_path / "quixbugs"
    shutil.copytree(CHECKOUT, checkout)
    test = checkout / "python_testcases/test_flatten.py"
    test.write_text(
        test.read_text().replace(
            "def test_flatten(input_data, expected):\n",
            "def test_flatten(input_data, expected):\n    if len(input_data) > 3:\n"
            "        pytest.skip('long')\n",
        )
    )
    done = run_ssw_cli(["bench", "import", "quixbugs", str(checkout), "--out", str(tmp_path / "o")])
    assert done.returncode == 1
    assert "refused flatten: test_flatten.py skips a case on a condition" in done.stderr
    assert done.stdout.endswith("2 of 3 tasks written; check them with ssw bench validate\n")


def test_a_folder_that_is_no_quixbugs_checkout_is_one_line(tmp_path: Path) -> None:
    done = run_ssw_cli(["bench", "import", "quixbugs", str(tmp_path), "--out", str(tmp_path / "o")])
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "not a QuixBugs checkout" in done.stderr


@pytest.mark.parametrize("program", ["flatten", "knapsack", "breadth_first_search"])
def test_the_rewritten_tests_import_the_task_module_and_nothing_of_quixbugs(program: str) -> None:
    text = (CHECKOUT / f"python_testcases/test_{program}.py").read_text()
    rewritten = hidden_test(program, text).text
    assert "python_programs" not in rewritten and "pytest.run_slow" not in rewritten
    assert f"from {program} import {program}\n" in rewritten
