"""How `ssw --help` reads: commands in the order a user meets them, and each value labelled by
what it is (`<dollars>`, `<file>`), never by its Python type (`<float>`, `<list[str]>`)."""

from __future__ import annotations

from typing import Any

from typer.core import TyperGroup

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

# A value's label by its parameter's name, where the name alone does not say what to give;
# a "command name" key wins over a plain name. Any other value is labelled by its name.
LABELS = {
    "budget_usd": "dollars",
    "budget_usd_total": "dollars",
    "max_steps": "count",
    "runs_per_task": "count",
    "jobs": "count",
    "workers": "count",
    "tag": "key=value",
    "script": "file",
    "bench run script": "name=file",
    "policy": "file",
    "task": "text",
    "task_file": "file",
    "ledger": "file",
    "path": "repo",
    "policy check path": "file",
    "repo": "folder",
    "root": "folder",
    "out": "folder",
    "bench validate out": "file",
    "directory": "folder",
    "runs": "folder",
    "run": "folder",
    "suite": "folder",
    "suites": "folder",
    "source": "folder",
    "data": "file",
    "provider": "name",
    "model": "id",
    "run_id": "id",
    "claim_id": "id",
    "claim": "id",
    "base_url": "url",
    "scheduler": "tcp://host:port",
    "sandbox": "mode",
    "by": "group",
    "title": "text",
    "timeout": "seconds",
}


def value_label(command: str, name: str) -> str:
    """The label `--help` shows after an option or argument of `command`, e.g. `dollars`."""
    return LABELS.get(f"{command} {name}") or LABELS.get(name) or name.replace("_", "-")


def label_values(command: Any, path: str = "") -> None:
    """Label every value of `command` and of its subcommands, in place."""
    for param in command.params:
        if param.name and hasattr(param, "display_type"):
            text = f"<{value_label(path, param.name)}>"
            # Typer would print the Python type here: both its help renderers ask this method.
            param.display_type = lambda ctx, text=text: text
    for name, sub in getattr(command, "commands", {}).items():
        label_values(sub, f"{path} {name}".strip())


class SswGroup(TyperGroup):
    """The root `ssw` group: commands in COMMAND_ORDER, any other after them as registered;
    every value, down to the subcommands', labelled by what it is."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        label_values(self)

    def list_commands(self, ctx: Any) -> list[str]:
        ranked = [name for name in COMMAND_ORDER if name in self.commands]
        return ranked + [name for name in self.commands if name not in ranked]
