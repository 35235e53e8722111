"""Where a gate's tools come from: the repository's own virtual environment first."""

from __future__ import annotations

import shlex
from pathlib import Path


def _venv_bins(root: Path) -> list[Path]:
    roots = [root]
    # A run's worktree lives in <repo>/.ssw/worktrees/<run-id>: the repository's venv serves it.
    if root.parent.name == "worktrees" and root.parent.parent.name == ".ssw":
        roots.append(root.parent.parent.parent)
    return [r / venv / "bin" for r in roots for venv in (".venv", "venv")]


def _executable(path: Path) -> bool:
    return path.is_file() and bool(path.stat().st_mode & 0o111)


def environment_tool(root: Path, name: str) -> str | None:
    """The project's own copy of a tool: in the repository's virtual environment, else beside
    the gates' interpreter (ssw's own Python when the project has no environment); None when
    that environment lacks it. Never a copy from elsewhere on PATH, whose version and plugins
    are not the project's."""
    from stepswitch.gates.interpreter import find_interpreter

    for folder in [*_venv_bins(root), find_interpreter(root).python.parent]:
        if _executable(folder / name):
            return shlex.quote(str(folder / name))
    return None


def pytest_command(root: Path) -> str:
    """The default tests gate: pytest under the gates' interpreter (gates/interpreter.py)."""
    from stepswitch.gates.interpreter import find_interpreter

    python = find_interpreter(root).python
    return f"{shlex.quote(str(python))} -m pytest -q -x -p no:cacheprovider"
