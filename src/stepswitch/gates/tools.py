"""Where a gate's tools come from: the repository's own virtual environment first."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path


def _venv_bins(root: Path) -> list[Path]:
    roots = [root]
    # A run's worktree lives in <repo>/.ssw/worktrees/<run-id>: the repository's venv serves it.
    if root.parent.name == "worktrees" and root.parent.parent.name == ".ssw":
        roots.append(root.parent.parent.parent)
    return [r / venv / "bin" for r in roots for venv in (".venv", "venv")]


def _executable(path: Path) -> bool:
    return path.is_file() and bool(path.stat().st_mode & 0o111)


def tool_command(root: Path, name: str) -> str:
    """The repository's own copy of a tool, else the one on PATH, else Stepswitch's, else the bare
    name (which then fails as "command not found")."""
    for folder in _venv_bins(root):
        if _executable(folder / name):
            return shlex.quote(str(folder / name))
    on_path = shutil.which(name)
    if on_path:
        return shlex.quote(on_path)
    beside = Path(sys.executable).parent / name
    return shlex.quote(str(beside)) if _executable(beside) else name


def pytest_command(root: Path) -> str:
    """The default tests gate: pytest under the gates' interpreter (gates/interpreter.py)."""
    from stepswitch.gates.interpreter import find_interpreter

    python = find_interpreter(root).python
    return f"{shlex.quote(str(python))} -m pytest -q -x -p no:cacheprovider"
