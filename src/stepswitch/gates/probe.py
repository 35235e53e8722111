"""What the gates' interpreter says of itself, asked in a child that sees nothing of the tree:
isolated (-I: no PYTHON* variable, no user site, neither the script's folder nor the current one
on sys.path), its own session, no stdin, bounded in time. One runner for every such probe
(`run_probe`, with the script written by `probe_script`)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

PROBE_TIMEOUT_S = 60.0


@contextlib.contextmanager
def probe_script(script: str) -> Iterator[Path]:
    """`script` as a file in a temporary folder of its own, removed with it after the block."""
    with tempfile.TemporaryDirectory(prefix="ssw-probe-") as folder:
        path = Path(folder) / "ssw_probe.py"
        path.write_text(script, encoding="utf-8")
        yield path


def run_probe(
    argv: list[str], cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`argv` in its own session (no terminal for the code it imports), without stdin, its output
    kept as text, stopped after PROBE_TIMEOUT_S. Raises OSError or subprocess.TimeoutExpired."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT_S,
        check=False,
    )


def ask_interpreter(python: Path, script: str, *args: str) -> Any:
    """The JSON `script` prints when `python` runs it with `args`; None when it fails, times
    out or prints no JSON (the caller says what that means)."""
    with probe_script(script) as path:
        try:
            done = run_probe([str(python), "-I", str(path), *args], cwd=path.parent)
            return json.loads(done.stdout) if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return None
