"""What the gates' interpreter says of itself, asked in a child that sees nothing of the tree:
isolated (-I: no PYTHON* variable, no user site, neither the script's folder nor the current one
on sys.path), its own session, no stdin, bounded in time. One runner for every such probe."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

PROBE_TIMEOUT_S = 60.0


def ask_interpreter(python: Path, script: str, *args: str) -> Any:
    """The JSON `script` prints when `python` runs it with `args`; None when it fails, times
    out or prints no JSON (the caller says what that means)."""
    with tempfile.TemporaryDirectory(prefix="ssw-probe-") as folder:
        path = Path(folder) / "ssw_probe.py"
        path.write_text(script, encoding="utf-8")
        try:
            done = subprocess.run(
                [str(python), "-I", str(path), *args],
                cwd=folder,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_S,
                check=False,
                start_new_session=True,
            )
            return json.loads(done.stdout) if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return None
