"""Gates for a repository that configures none: format, lint and types when it configures the
tools, pytest when it has tests. Tools are looked up in the repository's own virtual environment
first. See the docstring of stepswitch/gates/config.py for what is detected and why."""

from __future__ import annotations

import configparser
import tomllib
from pathlib import Path
from typing import Any

from stepswitch.gates.config import (
    PYPROJECT,
    CommandGate,
    GateConfig,
    GateSpec,
    TestsGate,
    read_gate_config,
)
from stepswitch.gates.impacted import is_test_file, python_files
from stepswitch.gates.tools import pytest_command, tool_command


def load_gates(root: Path) -> GateConfig:
    """The configured gates, or the detected ones when the repository configures none."""
    return read_gate_config(root) or detect_gates(root)


def _ini_section(path: Path, section: str) -> dict[str, str] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def _quiet_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


_PY_GLOBS = ("*.py", "*.pyi")


def detect_gates(root: Path) -> GateConfig:
    """Gates for a repository without configuration: the checks it already uses, cheapest first."""
    tool = _quiet_toml(root / PYPROJECT).get("tool", {})
    tool = tool if isinstance(tool, dict) else {}
    gates: list[GateSpec] = []
    ruff_files = ("ruff.toml", ".ruff.toml")
    if "ruff" in tool or any((root / f).is_file() for f in ruff_files):
        ruff = tool_command(root, "ruff")
        ruff_globs = (*_PY_GLOBS, PYPROJECT, *ruff_files)
        gates.append(
            CommandGate(
                name="format", command=f"{ruff} format --check .", timeout_s=120.0, globs=ruff_globs
            )
        )
        gates.append(
            CommandGate(
                name="lint",
                command=f"{ruff} check --output-format concise .",
                timeout_s=120.0,
                globs=ruff_globs,
            )
        )
    mypy_args = _mypy_args(root, tool)
    if mypy_args is not None:
        command = f"{tool_command(root, 'mypy')} {mypy_args}".strip()
        mypy_globs = (*_PY_GLOBS, PYPROJECT, "mypy.ini", ".mypy.ini", "setup.cfg")
        gates.append(CommandGate(name="types", command=command, timeout_s=600.0, globs=mypy_globs))
    if any(is_test_file(f) for f in python_files(root)):
        gates.append(
            TestsGate(name="tests", kind="tests", command=pytest_command(root), timeout_s=1800.0)
        )
    return GateConfig(tuple(gates), "detected")


def _mypy_args(root: Path, tool: dict[str, Any]) -> str | None:
    """None when the repository does not configure mypy; "" when its config names the files."""
    section: dict[str, Any] | None = None
    if isinstance(tool.get("mypy"), dict):
        section = tool["mypy"]
    else:
        for name in ("mypy.ini", ".mypy.ini", "setup.cfg"):
            if (root / name).is_file():
                section = _ini_section(root / name, "mypy")
                if section is not None:
                    break
    if section is None:
        return None
    if section.get("files"):
        return ""
    return "src" if (root / "src").is_dir() else "."
