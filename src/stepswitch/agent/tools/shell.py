"""The run tool: a shell command in the worktree, in its own process group, killed at a timeout."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from stepswitch.agent.tools.base import FunctionTool, ToolResult, refuse, schema
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.util.proc import run_in_group
from stepswitch.util.sandbox import reaped

TIMEOUT_EXIT_CODE = 124  # what coreutils `timeout` reports, so models recognise it

# Models write `cd /repo && cmd` out of habit: the folder is honoured through resolve, then dropped.
_LEADING_CD = re.compile(r"""^\s*cd\s+("[^"]*"|'[^']*'|[^\s;&|]+)\s*(?:&&|;)\s*""")


def split_leading_cd(ws: Workspace, command: str) -> tuple[Path, str]:
    """The working folder and the command, with a leading `cd <dir> &&` taken out and resolved."""
    match = _LEADING_CD.match(command)
    if match is None:
        return ws.root, command
    folder = shlex.split(match.group(1))[0] if match.group(1) else "."
    return ws.resolve(folder), command[match.end() :]


def _run(ws: Workspace, args: dict[str, Any]) -> ToolResult:
    command: str = args["command"]
    if not command.strip():
        return refuse("command is empty. Send the shell command to run, e.g. 'pytest -q'.")
    cwd, command = split_leading_cd(ws, command)
    if not cwd.is_dir():
        return refuse(
            f"The folder {ws.relative(cwd)!r} in the leading cd does not exist. "
            "Use list_dir to find it, or run the command from the repository root."
        )
    requested = args.get("timeout_s")
    limit = ws.command_timeout_s
    if requested is not None and requested > 0:
        limit = min(float(requested), limit)
    done = run_in_group(
        ws.command(["bash", "-c", command], cwd),
        cwd=cwd,
        env=ws.command_env(),
        timeout_s=limit,
        output_cap=ws.output_cap_chars,
        reaped=reaped(ws.confinement),
    )
    output, elapsed, timed_out = done.output, done.duration_s, done.timed_out
    if timed_out:
        code = TIMEOUT_EXIT_CODE
        first = (
            f"exit code {code}: timed out after {limit:g}s and was killed with all its "
            "processes. Run something shorter, or a narrower part of it (e.g. one test)."
        )
    else:
        code = done.exit_code if done.exit_code is not None else 127
        first = f"exit code {code} ({elapsed:.1f}s)"
    body = output or done.start_error or "(no output)"
    return ToolResult(output=f"{first}\n{body}", ok=code == 0, exit_code=code)


RUN = FunctionTool(
    "run",
    "Run a shell command (bash) from the repository root; stdout and stderr are merged and long "
    "output keeps its head and tail. Use it for tests, builds and git commands.",
    schema(
        {
            "command": {"type": "string", "description": "The bash command line."},
            "timeout_s": {
                "type": "number",
                "description": "Seconds before the command is killed (capped by the workspace).",
            },
        },
        ("command",),
    ),
    _run,
    aliases={"cmd": "command", "timeout": "timeout_s"},
)
