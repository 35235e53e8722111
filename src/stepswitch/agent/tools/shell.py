"""The run tool: a shell command in the worktree, in its own process group, killed at a timeout."""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from stepswitch.agent.tools.base import FunctionTool, ToolResult, refuse, schema
from stepswitch.agent.workspace.paths import Workspace

TIMEOUT_EXIT_CODE = 124  # what coreutils `timeout` reports, so models recognise it
_DRAIN_S = 2.0  # how long to wait for output still in the pipe once the shell has exited

# Models write `cd /repo && cmd` out of habit: the folder is honoured through resolve, then dropped.
_LEADING_CD = re.compile(r"""^\s*cd\s+("[^"]*"|'[^']*'|[^\s;&|]+)\s*(?:&&|;)\s*""")


class _HeadTail:
    """Keeps the first and last `cap // 2` characters of a stream and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = ""
        self.tail = ""
        self.cut = 0

    def add(self, text: str) -> None:
        if len(self.head) < self.half:
            take = self.half - len(self.head)
            self.head += text[:take]
            text = text[take:]
        self.tail += text
        if len(self.tail) > self.half:
            self.cut += len(self.tail) - self.half
            self.tail = self.tail[-self.half :]

    def text(self) -> str:
        if not self.cut:
            return self.head + self.tail
        note = f"\n[... {self.cut} characters cut from the middle of the output ...]\n"
        return self.head + note + self.tail


def _pump(stream: IO[bytes], sink: _HeadTail) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
        sink.add(decoder.decode(chunk))
    sink.add(decoder.decode(b"", final=True))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is already gone
        os.killpg(pgid, signal.SIGKILL)


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
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=cwd,
        env=ws.command_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so the whole tree can be killed
    )
    assert proc.stdout is not None
    sink = _HeadTail(ws.output_cap_chars)
    reader = threading.Thread(target=_pump, args=(proc.stdout, sink), daemon=True)
    reader.start()
    started = time.monotonic()
    timed_out = False
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        timed_out = True
    # Also once the shell exits: background children would otherwise outlive the call.
    _kill_group(proc.pid)
    proc.wait()
    reader.join(timeout=_DRAIN_S)  # a process that left the group may still hold the pipe
    if not reader.is_alive():
        proc.stdout.close()
    elapsed = time.monotonic() - started
    output = sink.text()
    if timed_out:
        code = TIMEOUT_EXIT_CODE
        first = (
            f"exit code {code}: timed out after {limit:g}s and was killed with all its "
            "processes. Run something shorter, or a narrower part of it (e.g. one test)."
        )
    else:
        code = proc.returncode
        first = f"exit code {code} ({elapsed:.1f}s)"
    body = output if output else "(no output)"
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
