"""How `ssw --help` reads: commands in the order a user meets them, each value named by what it
takes (`USD`, `FILE`, `PROVIDER:MODEL_ID`), never by its Python type (`<float>`, `<list[str]>`), and
each command's examples, environment and exit codes (cli/help_text.py)."""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup

from stepswitch.cli.help_text import teach

# By use: do a task, then choose and check the models, then the records, then the evidence.
COMMAND_ORDER = (
    "init",
    "run",
    "demo",
    "runs",
    "policy",
    "models",
    "prices",
    "probe",
    "ledger",
    "gates",
    "bench",
    "claims",
    "prove",
    "site",
    "serve",
)

# What a value takes, by its parameter's name, where the name alone does not say it; a
# "command name" key wins over a plain name. Any other value is named by its name, upper-cased.
LABELS = {
    "budget_usd": "USD",
    "budget_usd_total": "USD",
    "max_steps": "N",
    "min_steps": "N",
    "runs_per_task": "N",
    "jobs": "N",
    "workers": "N",
    "tag": "KEY=VALUE",
    "script": "FILE",
    "record_to": "FILE",
    "bench run script": "NAME=FILE",
    "policy": "FILE",
    "policy_path": "FILE",
    "task": "TEXT",
    "task_file": "FILE",
    "ledger": "FILE",
    "path": "PATH",
    "policy check path": "FILE",
    "repo": "PATH",
    "root": "FOLDER",
    "out": "FOLDER",
    "init out": "FILE",
    "bench validate out": "FILE",
    "policy suggest out": "FILE",
    "directory": "FOLDER",
    "runs": "FOLDER",
    "site build runs": "RUN",
    "run": "FOLDER",
    "suite": "FOLDER",
    "suites": "SUITE",
    "source": "FOLDER",
    "folder": "FOLDER",
    "buggy": "FOLDER",
    "correct": "FOLDER",
    "tests": "FOLDER",
    "bench": "FOLDER",
    "cluster_certs": "FOLDER",
    "data": "FILE",
    "sim_population": "FILE",
    "provider": "PROVIDER",
    "model": "PROVIDER:MODEL_ID",
    "probe model": "MODEL_ID",
    "contestant": "oracle|null|FILE",
    "run_id": "ID",
    "claim_id": "ID",
    "claim": "ID",
    "base_url": "URL",
    "scheduler": "tls://HOST:PORT",
    "sandbox": "MODE",
    "by": "GROUP",
    "title": "TEXT",
    "timeout": "SECONDS",
    "changed": "FILE",
    "host": "HOST",
    "port": "PORT",
    "floor": "SHARE",
    "max_file_mb": "MB",
    "bench import name": "humaneval|harbor|exercism|pairs",
    "format": "harbor",
}


def value_label(command: str, name: str) -> str:
    """What `--help` shows after an option of `command`, or as its argument, e.g. `USD`."""
    found = LABELS.get(f"{command} {name}") or LABELS.get(name)
    return found or name.upper().replace("_", "-")


def label_values(command: Any, path: str = "") -> None:
    """Name every value of `command` and of its subcommands by what it takes, in place: an
    option's metavar (`--budget-usd USD`), an argument's name in the usage line and the list
    (`ssw run [OPTIONS] PATH`); a metavar a command sets itself stays."""
    for param in command.params:
        if not param.name or getattr(param, "is_flag", False):
            continue
        if param.metavar is None:
            param.metavar = value_label(path, param.name)
        if param.param_type_name == "argument":
            # Named once, by its metavar: no Python type beside it, and no braces in the usage.
            param.display_type = lambda ctx: ""
            piece = param.metavar + ("..." if param.nargs != 1 else "")
            usage = piece if param.required else f"[{piece}]"
            param.get_usage_pieces = lambda ctx, usage=usage: [usage]
    for name, sub in getattr(command, "commands", {}).items():
        label_values(sub, f"{path} {name}".strip())


class SswGroup(TyperGroup):
    """The root `ssw` group: commands in COMMAND_ORDER, any other after them as registered;
    every value, down to the subcommands', named by what it takes; every command with its
    short line, examples and environment (cli/help_text.py)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        label_values(self)
        teach(self)

    def list_commands(self, ctx: Any) -> list[str]:
        ranked = [name for name in COMMAND_ORDER if name in self.commands]
        return ranked + [name for name in self.commands if name not in ranked]
