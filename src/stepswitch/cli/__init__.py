"""The `ssw` command: one module per command group; render.py makes the terminal text."""

from __future__ import annotations

import sys

# Commands that run the agent's or the gates' commands: keys leave ssw's own environment first,
# since an unconfined command (ssw gates, --sandbox none) reads it in /proc/<ssw pid>/environ.
AGENT_COMMANDS = frozenset({"run", "demo", "bench", "gates"})


def main() -> None:
    # httpx imports its own command-line client with the library (`httpx._main`: rich's console
    # and progress, click, pygments), about 60 ms of every ssw command that speaks HTTP, for a
    # client ssw never runs. A None entry makes that one import fail, and httpx then defines its
    # stub `httpx.main` instead (ADR 0042). Only in the `ssw` process, before httpx is imported.
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    if len(sys.argv) > 1 and sys.argv[1] in AGENT_COMMANDS:
        from stepswitch.util.keys import hide_keys

        hide_keys()  # before the heavy imports: the one re-exec stays cheap
    from stepswitch.cli.app import main as run_app

    run_app()
