"""A task may show the agent the failing test it must fix, as a bug report does: `[tests]
failing_at_start` names visible tests the start fails. `validate` holds the start to failing
exactly those (none more, none fewer) and the reference to passing them; the brief names them
(issue 24)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.bench.pytest_ids import junit_name
from stepswitch.bench.task import load_task
from stepswitch.bench.validate import validate_task
from stepswitch.errors import ConfigError
from tests.bench import TASK_TOML, write_task

# A visible test of the bug the task is about: the start fails it, the reference passes it.
VISIBLE_ADD = """
    from calc import add, double


    def test_double():
        assert double(2) == 4


    def test_add():
        assert add(2, 3) == 5
"""
DECLARED = 'failing_at_start = ["tests/test_calc.py::test_add"]\n'


def _task(tmp_path: Path, declared: str = DECLARED, visible: str = VISIBLE_ADD) -> Path:
    toml = TASK_TOML.format(name="t") + declared
    return write_task(tmp_path, "t", {"task.toml": toml, "repo/tests/test_calc.py": visible})


def test_a_start_that_fails_the_declared_visible_test_is_valid_and_the_brief_names_it(
    tmp_path: Path,
) -> None:
    task = load_task(_task(tmp_path))
    result = validate_task(task)

    assert result.valid, result.problem
    start = next(c for c in result.checks if c.name == "start_visible")
    assert "fails as declared: 1" in start.found
    assert task.brief.startswith(task.instruction.rstrip())
    assert "- tests/test_calc.py::test_add" in task.brief
    assert "fail now, and pass once the task is done" in task.brief


def test_without_the_declaration_the_same_task_is_invalid_as_before(tmp_path: Path) -> None:
    result = validate_task(load_task(_task(tmp_path, declared="")))
    assert not result.valid
    assert result.problem is not None and "fails its own visible tests" in result.problem


def test_a_start_that_fails_a_test_it_did_not_declare_is_invalid_naming_it(
    tmp_path: Path,
) -> None:
    broken_double = VISIBLE_ADD.replace("double(2) == 4", "double(2) == 5")
    result = validate_task(load_task(_task(tmp_path, visible=broken_double)))
    assert not result.valid
    assert result.problem is not None
    assert "fails visible tests not declared: tests.test_calc::test_double" in result.problem


def test_a_declared_test_the_start_passes_is_invalid_naming_it(tmp_path: Path) -> None:
    declared = (
        'failing_at_start = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_double"]\n'
    )
    result = validate_task(load_task(_task(tmp_path, declared=declared)))
    assert not result.valid
    assert result.problem is not None
    assert "declared failing at the start (failing_at_start) but not" in result.problem
    assert "tests.test_calc::test_double" in result.problem


def test_the_reference_must_pass_the_declared_test(tmp_path: Path) -> None:
    folder = _task(tmp_path)
    (folder / "solution" / "solution.patch").unlink()  # no fix: a patch of a comment only
    (folder / "solution" / "solution.patch").write_text(
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,3 @@\n+# noted\n def add(a, b):\n"
        "     return a - b\n",
        encoding="utf-8",
    )
    result = validate_task(load_task(folder))
    assert not result.valid
    assert result.problem is not None and "reference" in result.problem


@pytest.mark.parametrize(
    "value",
    [
        '"tests/test_calc.py::test_add"',
        '["test_add"]',
        '["tests/test_calc.py"]',
        "[" + ", ".join(f'"tests/t.py::test_{i}"' for i in range(11)) + "]",
    ],
)
def test_a_malformed_declaration_is_a_config_error_naming_the_key(
    tmp_path: Path, value: str
) -> None:
    with pytest.raises(ConfigError, match="failing_at_start"):
        load_task(_task(tmp_path, declared=f"failing_at_start = {value}\n"))


def test_a_node_id_is_named_as_the_junit_report_names_it() -> None:
    assert junit_name("tests/test_x.py::test_y") == "tests.test_x::test_y"
    assert (
        junit_name("tests/sub/test_x.py::TestA::test_b[1-2]")
        == "tests.sub.test_x.TestA::test_b[1-2]"
    )
    # A parameter is kept whole, as pytest's junitxml keeps it (SWE-bench ids hold such).
    assert junit_name("t/test_x.py::test_y[a/b::c d]") == "t.test_x::test_y[a/b::c d]"


def test_the_declaration_travels_through_a_harbor_export_and_import(tmp_path: Path) -> None:
    from stepswitch.bench.harbor import export_suite, import_harbor
    from stepswitch.bench.task import load_suite

    _task(tmp_path)
    export_suite(tmp_path / "suite", tmp_path / "harbor")
    [imported] = import_harbor(tmp_path / "harbor", tmp_path / "back")
    assert imported.why == ""
    [before], [after] = load_suite(tmp_path / "suite"), load_suite(tmp_path / "back")
    assert (after.spec, after.instruction) == (before.spec, before.instruction)
    assert after.spec.tests.failing_at_start == ("tests/test_calc.py::test_add",)
    told = (tmp_path / "harbor" / before.spec.id / "instruction.md").read_text()
    assert told == before.brief and "- tests/test_calc.py::test_add" in told  # Harbor's agent too


@pytest.mark.slow
def test_a_bench_run_of_such_a_task_is_told_the_failing_test_and_the_oracle_passes(
    tmp_path: Path,
) -> None:
    from stepswitch.bench.contestants import BuiltinContestant
    from stepswitch.bench.executor import inline_executor
    from stepswitch.bench.runner import BenchSpec, run_bench
    from stepswitch.bench.task import load_suite
    from stepswitch.records.folder import load_run

    _task(tmp_path)
    spec = BenchSpec(
        root=tmp_path / "runs" / "b1",
        tasks=load_suite(tmp_path / "suite"),
        contestants=[BuiltinContestant("oracle")],
    )
    [row] = run_bench(spec, executor=inline_executor, resamples=50).rows
    assert (row.passed, row.outcome) == (True, "done")
    told = load_run(spec.root / row.folder).run.task
    assert "- tests/test_calc.py::test_add" in told and told.startswith("add(2, 3) returns -1")
