"""Tasks in another language (ADR 0082): a task names the commands its tests run
(`requires_tools`) and is not judged where one is missing; a visible command other than pytest is
judged by its exit status; the polyglot suite's hidden tests are pytest running the language's
own runner, and a failure names the language's failing test."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stepswitch.bench.contestants import BuiltinContestant
from stepswitch.bench.grading_folder import grade
from stepswitch.bench.runner import BenchSpec, run_bench
from stepswitch.bench.task import load_suite, load_task
from stepswitch.bench.validate import validate_task
from stepswitch.cli.bench import bench_app
from stepswitch.errors import UsageError

from . import BUGGY, TASK_TOML, patch_of, write_task

POLYGLOT = Path(__file__).resolve().parents[2] / "bench" / "suites" / "polyglot"
NO_SUCH = "ssw-no-such-command"


def needs_missing_command(tmp_path: Path) -> Path:
    toml = f'requires_tools = ["{NO_SUCH}"]\n' + TASK_TOML.format(name="needs")
    return write_task(tmp_path, "needs", files={"task.toml": toml})


def test_validate_skips_a_task_whose_command_is_missing_and_does_not_fail_for_it(tmp_path):
    needs_missing_command(tmp_path)
    app = typer.Typer()
    app.add_typer(bench_app, name="bench")
    result = CliRunner().invoke(app, ["bench", "validate", str(tmp_path / "suite")])
    skipped, total = result.output.splitlines()
    assert skipped == (
        f"SKIPPED  suite/needs: cannot judge here: the task's tests run the `{NO_SUCH}` command, "
        "not on PATH"
    )
    assert total.startswith("1 tasks: 0 valid, 0 invalid, 1 not judged (a command missing) (")
    assert result.exit_code == 0


def test_a_bench_of_a_task_whose_command_is_missing_is_refused_before_any_run(tmp_path):
    needs_missing_command(tmp_path)
    with pytest.raises(UsageError) as refused:
        run_bench(
            BenchSpec(
                root=tmp_path / "r",
                tasks=load_suite(tmp_path / "suite"),
                contestants=[BuiltinContestant("null")],
            )
        )
    assert str(refused.value).startswith(f"suite/needs requires the `{NO_SUCH}` command: install")
    assert os.listdir(tmp_path) == ["suite"]


def test_a_visible_command_other_than_pytest_is_judged_by_its_exit_status(tmp_path):
    checks = "python -c 'import calc; assert calc.double(2) == 4'"
    toml = TASK_TOML.format(name="task").replace("[tests]\n", f'[tests]\nvisible = "{checks}"\n')
    broken = BUGGY.replace("a - b", "a + b").replace("2 * x", "3 * x")
    folder = write_task(
        tmp_path,
        files={"task.toml": toml, "solution/solution.patch": patch_of("calc.py", BUGGY, broken)},
    )
    result = validate_task(load_task(folder))
    found = {c.name: c.found for c in result.checks}
    assert found["start_visible"] == "python exit 0"
    assert result.problem is not None
    assert result.problem.startswith("the reference fails its own visible tests: python exit 1")


def test_a_node_tasks_failure_names_the_failing_node_test(tmp_path):
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the polyglot suite's Node tasks cannot run here")
    task = load_task(POLYGLOT / "slugify-accents")
    verdict = grade(task, task.repo, tmp_path)
    assert verdict.failed and verdict.failing == (
        ".ssw_hidden.test_hidden::test_node[slug.test.js]",
    )
    assert "not ok 1 - accents are dropped, letters kept" in verdict.output


def test_the_polyglot_suite_has_node_and_go_tasks_each_naming_its_command():
    tools = [task.spec.requires_tools for task in load_suite(POLYGLOT)]
    assert tools.count(("node",)) >= 6 and tools.count(("go",)) >= 4
    assert len(tools) == tools.count(("node",)) + tools.count(("go",))


def test_a_task_that_needs_a_command_is_not_exported_to_harbor(tmp_path):
    from stepswitch.bench.harbor import export_suite

    needs_missing_command(tmp_path)
    with pytest.raises(UsageError, match=f"suite/needs cannot be exported.*run {NO_SUCH}"):
        export_suite(tmp_path / "suite", tmp_path / "out")
    assert sorted(os.listdir(tmp_path)) == ["suite"]
