"""A TOML nested far deeper than any real file (a policy, a preset in the registry, a bench
task.toml, a repository's pyproject.toml) is refused in one line naming the file, exit 2: no
RecursionError traceback, no minutes spent parsing a dotted key of 50,000 parts."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from stepswitch.registry.presets import registry_dir
from stepswitch.util.toml import MAX_TOML_DEPTH, parse_toml
from tests.bench import write_task
from tests.harness.repo import git

from .test_bad_input import Setup, assert_refused_leaving_nothing, make_setup, ssw

# Documents nested `n` deep each way TOML nests: arrays, inline tables, a table's dotted name.
SHAPES = {
    "arrays": lambda n: "deep = " + "[" * n + "]" * n + "\n",
    "inline tables": lambda n: "deep = " + "{a = " * n + "1" + "}" * n + "\n",
    "a dotted table name": lambda n: "[" + ".".join(["deep"] * n) + "]\n",
}
REFUSALS = {
    "arrays": "(syntax): nested deeper than 100 levels (at line",
    "inline tables": "(syntax): nested deeper than 100 levels (at line",
    "a dotted table name": "(syntax): a key of more than 100 parts (at line",
}
DEEP = 50_000
DOTTED_DEEP = (
    2_000  # tomllib's time grows with the square of a key's parts: kept short for the old code
)


def _deep(shape: str) -> str:
    return SHAPES[shape](DOTTED_DEEP if shape == "a dotted table name" else DEEP)


def _one_line_refusal(result, path: str, shape: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"ssw: {path}: {REFUSALS[shape]}"), result.stderr


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return make_setup(tmp_path)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_policy_check_of_a_deeply_nested_policy_is_one_line_exit_2(setup: Setup, shape: str):
    policy = setup.work / "deep.toml"
    policy.write_text(_deep(shape) + setup.policy.read_text())
    shallow = setup.work / "shallow.toml"
    shallow.write_text(SHAPES[shape](3) + setup.policy.read_text())

    _one_line_refusal(ssw("policy", "check", policy), str(policy), shape)
    control = ssw("policy", "check", shallow)  # the same key a little deep: only an unknown key
    assert control.returncode == 2 and "deep: unknown key" in control.stderr, control.stderr


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_deeply_nested_preset_in_the_registry_is_one_line_exit_2(setup: Setup, shape: str):
    root = setup.work / "registry"
    shutil.copytree(registry_dir() / "providers", root / "providers")
    preset = root / "providers" / "extra.toml"
    preset.write_text(_deep(shape))

    for args in (["models"], ["policy", "check", setup.policy]):
        _one_line_refusal(ssw(*args, env={"SSW_REGISTRY": str(root)}), str(preset), shape)
    preset.unlink()
    assert ssw("models", env={"SSW_REGISTRY": str(root)}).returncode == 0  # the control


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_deeply_nested_task_toml_is_one_line_exit_2(tmp_path: Path, shape: str):
    folder = write_task(tmp_path, "deep")
    task = folder / "task.toml"
    task.write_text(task.read_text().replace("[tests]", _deep(shape) + "[tests]"))

    _one_line_refusal(ssw("bench", "validate", folder), str(task), shape)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_repositorys_deeply_nested_pyproject_is_one_line_exit_2_for_gates_and_run(
    setup: Setup, shape: str
):
    (setup.repo / "pyproject.toml").write_text(_deep(shape))
    git(setup.repo, "add", "-A")
    git(setup.repo, "commit", "-qm", "a pyproject someone handed over")

    _one_line_refusal(ssw("gates", setup.repo), "pyproject.toml", shape)
    result = ssw(*setup.run_args())
    assert_refused_leaving_nothing(result, setup)
    assert result.stderr.startswith(f"ssw: pyproject.toml: {REFUSALS[shape]}"), result.stderr


def test_brackets_in_strings_and_comments_are_no_nesting_and_real_files_read_as_tomllib_reads():
    many = "[" * (3 * MAX_TOML_DEPTH)
    text = (
        "nested = " + "[" * MAX_TOML_DEPTH + "]" * MAX_TOML_DEPTH + "\n"
        f'basic = "{many}" # {many}\n'
        f"literal = '{many}'\n"
        f'multi = """{many}\n"" \\""" {many}"""\n'
        f"multi_literal = '''{many}\n'' {many}'''\n"
        f"floats = [{'1.5, ' * 300}2.5]\n"
        "[tool.a.b.c]\n"
        'd = {e.f.g = [[1, 2], [3]], "h.i" = 1979-05-27T07:32:00.999Z}\n'
    )

    assert parse_toml(text) == tomllib.loads(text)


def test_a_string_that_never_ends_before_deep_brackets_is_tomllibs_syntax_error_not_recursion():
    text = 'a = "never ends\nb = ' + "[" * DEEP + "]" * DEEP + "\n"

    with pytest.raises(tomllib.TOMLDecodeError, match="line 1"):
        parse_toml(text)
