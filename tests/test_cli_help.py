"""`ssw --help` as the manual: the version, commands by use, values named by what they are."""

import re
from importlib.metadata import version

from typer.testing import CliRunner

from stepswitch.cli.app import app
from tests.test_cli import ssw


def test_version_prints_the_package_version_and_exits_0():
    result = ssw("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"ssw {version('stepswitch')}"


def _listed_commands(help_text: str) -> list[str]:
    section = help_text.split("Commands:\n", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ")]


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


def _value_labels(help_text: str) -> set[str]:
    """The `<label>` after each option and argument: what the user is asked to give."""
    return set(re.findall(r"^  \S+ <([^>]+)>", help_text, re.MULTILINE))


def test_every_value_in_every_help_says_what_it_is_not_its_python_type():
    helps = _every_help()
    assert {"ssw run", "ssw bench run", "ssw prices refresh", "ssw site build"} <= set(helps)
    python_types = {"str", "int", "float", "bool", "path", "int range", "float range"}
    for command, text in helps.items():
        for label in _value_labels(text):
            assert label not in python_types, f"{command}: <{label}>"
            assert "[" not in label and "Path" not in label, f"{command}: <{label}>"
    assert "--budget-usd <dollars>" in helps["ssw run"]
    assert "--tag <key=value>" in helps["ssw run"]
