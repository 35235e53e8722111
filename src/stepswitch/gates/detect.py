"""Gates for a repository that configures none: format, lint and types when it configures the
tool (its table, its own config file, or the tool among its development dependencies) and the
project's environment has it, pytest when it has tests. A tool configured but missing from the
project's environment is no gate (ssw's own copy would judge the project by another version and
configuration), said so at the run's start. See stepswitch/gates/config.py for more."""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path
from typing import Any

from stepswitch.gates.config import (
    PYPROJECT,
    CommandGate,
    GateConfig,
    GateSpec,
    SuiteGate,
    TestsGate,
    read_gate_config,
)
from stepswitch.gates.impacted import is_test_file
from stepswitch.gates.import_scan import python_files
from stepswitch.gates.lang.base import Detection
from stepswitch.gates.lang.registry import DETECTORS, FALLBACK_DETECTOR, detector
from stepswitch.gates.tools import environment_tool, pytest_command
from stepswitch.util.toml import parse_toml


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
        return parse_toml(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


_PY_GLOBS = ("*.py", "*.pyi")


def _dev_requirements(data: dict[str, Any]) -> set[str]:
    """Distribution names among the project's optional and development dependencies."""
    found: list[object] = []
    project = data.get("project", {})
    if isinstance(project, dict) and isinstance(project.get("optional-dependencies"), dict):
        for group in project["optional-dependencies"].values():
            found += group if isinstance(group, list) else []
    groups = data.get("dependency-groups", {})
    if isinstance(groups, dict):
        for group in groups.values():
            found += group if isinstance(group, list) else []
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    if isinstance(poetry, dict):
        for table in [poetry.get("dev-dependencies"), *_poetry_groups(poetry)]:
            found += list(table) if isinstance(table, dict) else []
    names = set()
    for entry in found:
        if isinstance(entry, str):
            names.add(re.split(r"[\s\[<>=!~;@(]", entry.strip(), maxsplit=1)[0].lower())
    return names


def _poetry_groups(poetry: dict[str, Any]) -> list[object]:
    groups = poetry.get("group", {})
    if not isinstance(groups, dict):
        return []
    return [g.get("dependencies") for g in groups.values() if isinstance(g, dict)]


def detect_gates(root: Path) -> GateConfig:
    """Gates for a repository without configuration: the checks it already uses, cheapest first."""
    data = _quiet_toml(root / PYPROJECT)
    tool = data.get("tool", {})
    tool = tool if isinstance(tool, dict) else {}
    dev = _dev_requirements(data)
    gates: list[GateSpec] = []
    notes: list[str] = []
    ruff_files = ("ruff.toml", ".ruff.toml")
    if "ruff" in tool or "ruff" in dev or any((root / f).is_file() for f in ruff_files):
        ruff = environment_tool(root, "ruff")
        ruff_globs = (*_PY_GLOBS, PYPROJECT, *ruff_files)
        if ruff is None:
            notes.append(_missing("ruff", "format and lint"))
        else:
            gates.append(
                CommandGate(
                    name="format",
                    command=f"{ruff} format --check .",
                    timeout_s=120.0,
                    globs=ruff_globs,
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
    if mypy_args is None and "mypy" in dev:
        mypy_args = "src" if (root / "src").is_dir() else "."
    if mypy_args is not None:
        mypy = environment_tool(root, "mypy")
        if mypy is None:
            notes.append(_missing("mypy", "types"))
        else:
            command = f"{mypy} {mypy_args}".strip()
            mypy_globs = (*_PY_GLOBS, PYPROJECT, "mypy.ini", ".mypy.ini", "setup.cfg")
            gates.append(
                CommandGate(name="types", command=command, timeout_s=600.0, globs=mypy_globs)
            )
    if any(is_test_file(f) for f in python_files(root)):
        gates.append(
            TestsGate(name="tests", kind="tests", command=pytest_command(root), timeout_s=1800.0)
        )
    languages = ["Python"] if gates else []
    reasons: list[tuple[str, str]] = []
    for found in _other_languages(root, any_tests=bool(gates)):
        if found.gates:
            languages.append(found.language)
        taken = {g.name for g in gates}
        for detected in found.gates:
            # Two languages may both want "tests": the later one is named after its language.
            name = detected.spec.name
            if name in taken:
                name = f"{found.language.lower()}-{name}"
            gates.append(detected.spec.model_copy(update={"name": name}))
            reasons.append((name, detected.reason))
            taken.add(name)
        notes += found.notes
    return GateConfig(
        tuple(gates),
        "detected",
        notes=tuple(notes),
        reasons=tuple(reasons),
        languages=tuple(languages) or ("Python",),
    )


def _other_languages(root: Path, any_tests: bool) -> list[Detection]:
    """The gates of the other languages the repository declares (gates/lang/); a Makefile's or
    justfile's `test` target only when no language found a test suite."""
    found = [detector(target)(root) for target in DETECTORS]
    has_suite = any_tests or any(
        isinstance(d.spec, TestsGate | SuiteGate) for f in found for d in f.gates
    )
    if not has_suite:
        found.append(detector(FALLBACK_DETECTOR)(root))
    return found


def _missing(tool: str, gates: str) -> str:
    return (
        f"gates: no {gates} gate: the project configures {tool}, but its environment has no "
        f"{tool} (install it there, or configure the gates in [tool.stepswitch.gates])"
    )


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
