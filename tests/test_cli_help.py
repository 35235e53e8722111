"""`ssw --help` as the manual: the version, commands by use, values named by what they take,
and on every command its examples and the environment it reads; `ssw run --help` its exit codes
as the code sets them."""

import re
import shlex
from importlib.metadata import version

import pytest
from typer.testing import CliRunner

from stepswitch.cli.app import app
from stepswitch.cli.help_text import KEY_VARIABLES
from stepswitch.errors import UsageError
from stepswitch.registry.presets import load_shipped_registry
from stepswitch.util.exit_codes import BAD_INPUT, DONE, INTERRUPTED, NOT_DONE, RUN_EXIT_CODES
from tests.test_cli import ssw


def test_version_prints_the_package_version_and_exits_0():
    result = ssw("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ssw {version('stepswitch')}"


def _command_rows(help_text: str) -> dict[str, str]:
    """The command list: each command's name and its line, whole (wrapped lines joined)."""
    section = help_text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        if re.match(r"^  \S", line):
            name, _, text = line.strip().partition(" ")
            rows[name] = text.strip()
        elif rows:
            rows[list(rows)[-1]] += " " + line.strip()
    return rows


def _listed_commands(help_text: str) -> list[str]:
    return list(_command_rows(help_text))


def test_help_lists_commands_by_use_tasks_first_evidence_last():
    result = ssw("--help")
    assert result.returncode == 0, result.stderr
    assert _listed_commands(result.stdout) == [
        *("init", "run", "demo", "runs"),
        *("policy", "models", "prices", "probe"),
        *("ledger", "gates"),
        *("bench", "claims", "prove", "site", "serve"),
    ]


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], prog_name="ssw")
    assert result.exit_code == 0, result.output
    return result.output


def _every_help(*args: str) -> dict[str, str]:
    text = _help(*args)
    found = {" ".join(["ssw", *args]): text}
    if "Commands:\n" in text:
        for name in _listed_commands(text):
            found.update(_every_help(*args, name))
    return found


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    """Every command's help, rendered once for the tests below: they only read it."""
    return _every_help()


def _value_labels(help_text: str) -> set[str]:
    """The word after each option that takes a value: what the user is asked to give."""
    return set(re.findall(r"^  --[\w-]+ (\S+)", help_text, re.MULTILINE))


def test_every_value_in_every_help_says_what_it_takes_not_its_python_type(helps):
    assert {"ssw run", "ssw bench run", "ssw prices refresh", "ssw site build"} <= set(helps)
    python_types = {"STR", "INT", "INTEGER", "FLOAT", "BOOL", "BOOLEAN"}
    for command, text in helps.items():
        for label in _value_labels(text):
            assert label not in python_types, f"{command}: {label}"
            assert not re.search(r"[<>{}\[]", label), f"{command}: {label}"
        usage = text.split("\n", 1)[0]
        assert "{" not in usage and "<" not in usage, f"{command}: {usage}"
    assert "--budget-usd USD" in helps["ssw run"]
    assert "--tag KEY=VALUE" in helps["ssw run"]
    assert "--model PROVIDER:MODEL_ID" in helps["ssw run"]
    assert helps["ssw run"].startswith("Usage: ssw run [OPTIONS] PATH\n")
    assert "--out FILE" in helps["ssw init"]  # it writes a file, not into a folder
    assert "--changed FILE" in helps["ssw gates"]


def test_the_command_lists_give_each_commands_line_whole(helps):
    for command, text in helps.items():
        if "Commands:\n" in text:
            for name, line in _command_rows(text).items():
                assert line and not line.endswith("..."), f"{command} {name}: {line}"


def _examples(help_text: str) -> list[str]:
    block = help_text.split("Examples:\n", 1)[1].strip("\n").split("\n\n", 1)[0]
    return [line.strip() for line in block.splitlines()]


def test_every_command_teaches_by_examples_of_itself_that_name_only_its_options(helps):
    for command, text in helps.items():
        if command == "ssw":
            continue
        examples = _examples(text)
        assert examples, command
        for example in examples:
            assert example.startswith(f"{command} ") or example == command, example
            for word in shlex.split(example):
                if word.startswith("--"):
                    assert re.search(rf"^  (\S+ / )?{re.escape(word)}\b", text, re.M), (
                        f"{example}: {word}"
                    )


def test_the_help_names_the_environment_a_command_reads(helps):
    shipped = {s.api_key_env for s in load_shipped_registry().values() if s.api_key_env}
    assert set(KEY_VARIABLES) == shipped  # a new preset's key is named in the help too
    environment = {
        c: t.split("Environment:", 1)[1] for c, t in helps.items() if "Environment:" in t
    }
    for variable in (*shipped, "SSW_REGISTRY", "SSW_CACHE_DIR", "SSW_LEDGER", "OTEL_"):
        assert variable in environment["ssw run"], variable
    assert "SSW_LEDGER" in environment["ssw runs show"] and "SSW_LEDGER" in environment["ssw serve"]
    assert "SSW_CACHE_DIR" in environment["ssw prices refresh"]
    assert (
        "NEBIUS_API_KEY" in environment["ssw probe"] and "NEBIUS_API_KEY" in environment["ssw init"]
    )


def test_run_help_lists_the_exit_codes_the_run_sets():
    assert (DONE, NOT_DONE, BAD_INPUT, INTERRUPTED) == (0, 1, 2, 130)
    assert UsageError("x").exit_code == BAD_INPUT
    codes = _help("run").split("Exit codes:\n", 1)[1]
    listed = re.findall(r"^    (\d+) +(\S+)", codes, re.MULTILINE)
    assert listed == [(str(code), meaning.split()[0]) for code, meaning in RUN_EXIT_CODES]
    assert [int(code) for code, _ in listed] == [0, 1, 2, 130]
