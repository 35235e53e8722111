from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.bench.task import load_suite, load_task
from stepswitch.errors import ConfigError
from tests.bench import TASK_TOML, write_task


def error_of(folder: Path) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_task(folder)
    return caught.value


def test_loads_a_task_with_its_suite_and_defaults(tmp_path):
    task = load_task(write_task(tmp_path, "csv-fix"))
    assert task.name == "suite/csv-fix"
    assert task.spec.kind == "bugfix"
    assert task.spec.limits.task_timeout_s == 1800.0
    assert task.command[:3] == ["python", "-m", "pytest"]
    assert [p.name for p in task.patches] == ["solution.patch"]
    assert task.gates is None


def test_unknown_key_names_the_file_and_the_key(tmp_path):
    folder = write_task(
        tmp_path, files={"task.toml": TASK_TOML.format(name="task") + "colour = 1\n"}
    )
    error = error_of(folder)
    assert (error.file, error.key) == (str(folder / "task.toml"), "tests.colour")
    assert "unknown key" in str(error)


def test_missing_command_is_named(tmp_path):
    toml = 'id = "task"\nkind = "bugfix"\n[tests]\nper_test_timeout_s = 5\n'
    error = error_of(write_task(tmp_path, files={"task.toml": toml}))
    assert error.key == "tests.command"
    assert "missing" in str(error)


def test_wrong_type_is_named(tmp_path):
    toml = TASK_TOML.format(name="task").replace(
        "per_test_timeout_s = 5", 'per_test_timeout_s = "5"'
    )
    assert (
        error_of(write_task(tmp_path, files={"task.toml": toml})).key == "tests.per_test_timeout_s"
    )


def test_unknown_kind_lists_the_kinds(tmp_path):
    toml = TASK_TOML.format(name="task").replace('"bugfix"', '"chore"')
    error = error_of(write_task(tmp_path, files={"task.toml": toml}))
    assert error.key == "kind"
    assert "numerical" in str(error)


def test_id_must_be_the_folder_name(tmp_path):
    error = error_of(write_task(tmp_path, files={"task.toml": TASK_TOML.format(name="other")}))
    assert error.key == "id"


def test_binary_task_toml_is_refused(tmp_path):
    error = error_of(write_task(tmp_path, files={"task.toml": b"id = \x00\x01\x02"}))
    assert error.key == "(file)"
    assert "binary" in str(error)


def test_non_utf8_task_toml_is_refused(tmp_path):
    error = error_of(write_task(tmp_path, files={"task.toml": b'id = "caf\xe9"\n'}))
    assert "UTF-8" in str(error)


def test_toml_syntax_error(tmp_path):
    assert error_of(write_task(tmp_path, files={"task.toml": "id = \n"})).key == "(syntax)"


def test_command_must_run_pytest(tmp_path):
    toml = TASK_TOML.format(name="task").replace("python -m pytest -q", "make test")
    error = error_of(write_task(tmp_path, files={"task.toml": toml}))
    assert error.key == "tests.command"
    assert "pytest" in str(error)


@pytest.mark.parametrize(
    ("left_out", "named"),
    [
        ("instruction.md", "instruction.md"),
        ("solution/solution.patch", "solution.patch"),
        ("tests/test_hidden.py", "tests"),
    ],
)
def test_missing_part_names_its_file(tmp_path, left_out, named):
    error = error_of(write_task(tmp_path, files={left_out: None}))
    assert error.file.endswith(named)


def test_missing_repo_is_named(tmp_path):
    folder = write_task(
        tmp_path,
        files={"repo/pyproject.toml": None, "repo/calc.py": None, "repo/tests/test_calc.py": None},
    )
    assert error_of(folder).file == str(folder / "repo")


def test_empty_instruction_is_refused(tmp_path):
    error = error_of(write_task(tmp_path, files={"instruction.md": "  \n\n"}))
    assert "empty" in str(error)


def test_broken_gate_table_in_the_repo_names_the_repo_file(tmp_path):
    pyproject = '[tool.stepswitch.gates.g]\nkind = "golden"\ncommand = "x"\n'
    folder = write_task(tmp_path, files={"repo/pyproject.toml": pyproject})
    error = error_of(folder)
    assert error.file == str(folder / "repo" / "pyproject.toml")
    assert error.key == "tool.stepswitch.gates.g.expected"


def test_task_gates_are_parsed(tmp_path):
    toml = TASK_TOML.format(name="task") + '\n[gates.lint]\ncommand = "true"\n'
    task = load_task(write_task(tmp_path, files={"task.toml": toml}))
    assert task.gates is not None
    assert [g.name for g in task.gates.gates] == ["lint"]


def test_suite_lists_its_tasks_by_name(tmp_path):
    write_task(tmp_path, "b-task")
    write_task(tmp_path, "a-task")
    (tmp_path / "suite" / "README.md").write_text("notes")
    assert [t.name for t in load_suite(tmp_path / "suite")] == ["suite/a-task", "suite/b-task"]


def test_empty_suite_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no task folders"):
        load_suite(tmp_path / "empty")


def test_declared_failing_tests_need_a_start_with_tests(tmp_path):
    toml = TASK_TOML.format(name="task") + 'failing_at_start = ["tests/test_calc.py::test_x"]\n'
    folder = write_task(tmp_path, files={"task.toml": toml, "repo/tests/test_calc.py": None})
    error = error_of(folder)
    assert (error.key, error.problem) == (
        "tests.failing_at_start",
        "repo/ holds no test of its own",
    )


def test_pass_to_pass_needs_fail_to_pass(tmp_path):
    toml = TASK_TOML.format(name="task") + 'pass_to_pass = ["tests/test_calc.py::test_double"]\n'
    error = error_of(write_task(tmp_path, files={"task.toml": toml}))
    assert (error.key, error.problem) == ("tests.pass_to_pass", "given without fail_to_pass")
