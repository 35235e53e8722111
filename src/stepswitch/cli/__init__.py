"""The `ssw` command: one module per command group; render.py makes the terminal text."""

from __future__ import annotations

import sys

# Commands that run the agent's or the gates' commands: keys leave ssw's own environment first,
# since an unconfined command (ssw gates, --sandbox none) reads it in /proc/<ssw pid>/environ.
AGENT_COMMANDS = frozenset({"run", "demo", "bench", "gates"})


def main() -> None:
    # ssw's own modules keep their bytecode whatever PYTHONDONTWRITEBYTECODE says, or an install
    # not compiled by pip (an editable one) compiles them at every start (ADR 0075). The variable
    # stays in the environment: the gates' and the agent's commands are given it in any case
    # (util/child_env.py, gates/interpreter.py), so nothing writes bytecode into the user's tree.
    sys.dont_write_bytecode = False
    # Libraries' imports for features ssw never uses: httpx's own command-line client, httpcore's
    # trio backend (ADR 0042). Before httpx is imported.
    from stepswitch.util.lean_imports import leave_out_unused_imports

    leave_out_unused_imports()
    if len(sys.argv) > 1 and sys.argv[1] in AGENT_COMMANDS:
        from stepswitch.util.keys import hide_keys

        hide_keys()  # before the heavy imports: the one re-exec stays cheap
    from stepswitch.cli.app import main as run_app

    run_app()
