"""The gates a Node or TypeScript package declares in the package.json at the repository's root:
its `format` check, `lint` and `typecheck` scripts (or `tsc --noEmit` when TypeScript is among
its dependencies beside a tsconfig.json) as command gates, and its `test` script as the suite gate
of the runner the script (or else the only runner among its dependencies) names: node's own
`--test`, Jest, Vitest or Mocha. Each script runs through the package manager its lockfile names.
A runner or `tsc` declared but missing from node_modules is a note, never a silent skip: ssw
installs nothing (`npm install` is the user's)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from stepswitch.gates.config import CommandGate, RunnerName, SuiteGate
from stepswitch.gates.lang.base import Detected, Detection
from stepswitch.gates.lang.node_project import ManifestUnreadable, NodeProject

NODE = "Node"
TYPESCRIPT = "TypeScript"
# npm init's placeholder: no tests.
_PLACEHOLDER = re.compile(r"no test specified")
# A script's runner, by the program it names.
_RUNNER_WORDS: tuple[tuple[RunnerName, re.Pattern[str]], ...] = (
    ("node-test", re.compile(r"(?:^|[\s;&|(])node\b[^;&|]*\s--test\b")),
    ("vitest", re.compile(r"\bvitest\b")),
    ("jest", re.compile(r"\bjest\b")),
    ("mocha", re.compile(r"\bmocha\b")),
)
# The program each runner is, in node_modules/.bin.
_BINARY: dict[RunnerName, str] = {"vitest": "vitest", "jest": "jest", "mocha": "mocha"}
_FORMAT_SCRIPTS = ("format:check", "check-format", "fmt:check", "format-check", "prettier:check")
_CHECKING = re.compile(r"--check\b|--list-different\b|(?:^|\s)-l(?:\s|$)|\bformat:check\b")
_TYPE_SCRIPTS = ("typecheck", "type-check", "types", "tsc", "check-types")
# What `tsc --noEmit` reads: a change to none of these leaves its verdict as it was.
TSC_GLOBS = (
    *(f"*{suffix}" for suffix in (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")),
    "tsconfig*.json",
    "package.json",
)


def _note(text: str) -> str:
    return f"gates: {text}"


def detect(root: Path) -> Detection:
    """The gates package.json at `root` declares; nothing without one."""
    try:
        project = NodeProject.read(root)
    except ManifestUnreadable as exc:
        return Detection(NODE, notes=(_note(f"no Node gates: {exc}"),))
    if project is None:
        return Detection(NODE)
    typescript = (root / "tsconfig.json").is_file()
    language = TYPESCRIPT if typescript else NODE
    gates: list[Detected] = []
    notes: list[str] = []
    if shutil.which(project.manager) is None:
        return Detection(
            language,
            notes=(
                _note(
                    f"no Node gates: package.json runs through {project.manager} "
                    f"({project.manager_why}), which is not on PATH (install it)"
                ),
            ),
        )
    via = f"through {project.manager} ({project.manager_why})"
    fmt = _format_script(project)
    if fmt is not None:
        why = f"package.json scripts.{fmt} checks the format, {via}"
        gates.append(Detected(_command("format", project.run(fmt), 120.0), why))
    elif "format" in project.scripts:
        notes.append(_note("no format gate: package.json scripts.format rewrites files"))
    if "lint" in project.scripts:
        if "--fix" in project.scripts["lint"]:
            notes.append(_note("no lint gate: package.json scripts.lint fixes files (--fix)"))
        else:
            why = f"package.json scripts.lint, {via}"
            gates.append(Detected(_command("lint", project.run("lint"), 300.0), why))
    types = next((s for s in _TYPE_SCRIPTS if s in project.scripts), None)
    if types is not None:
        why = f"package.json scripts.{types}, {via}"
        gates.append(Detected(_command("types", project.run(types), 600.0), why))
    elif typescript and "typescript" in project.dependencies:
        tsc = project.bin("tsc")
        if tsc is not None:
            why = "typescript is a dependency and tsconfig.json exists: tsc --noEmit"
            command = f"{shlex.quote(tsc)} --noEmit"
            gate = CommandGate(name="types", command=command, timeout_s=600.0, globs=TSC_GLOBS)
            gates.append(Detected(gate, why))
        else:
            notes.append(_missing("typescript", "tsc", "types", project))
    tests = _tests(project, via, notes)
    if tests is not None:
        gates.append(tests)
    return Detection(language, tuple(gates), tuple(notes))


def _command(name: str, command: str, timeout_s: float) -> CommandGate:
    return CommandGate(name=name, command=command, timeout_s=timeout_s)


def _format_script(project: NodeProject) -> str | None:
    named = next((s for s in _FORMAT_SCRIPTS if s in project.scripts), None)
    if named is not None:
        return named
    script = project.scripts.get("format")
    return "format" if script is not None and _CHECKING.search(script) else None


def runner_of(project: NodeProject, script: str) -> tuple[RunnerName | None, str]:
    """The runner the test script runs, and how that was read."""
    for name, pattern in _RUNNER_WORDS:
        if pattern.search(script):
            return name, f"package.json scripts.test runs {_shown(name)}"
    declared = [n for n, _ in _RUNNER_WORDS if n in _BINARY and n in project.dependencies]
    if len(declared) == 1:
        name = declared[0]
        return name, f"package.json scripts.test, with {name} its only test runner dependency"
    return None, "package.json scripts.test runs no runner Stepswitch reads"


def _shown(name: RunnerName) -> str:
    return "node --test" if name == "node-test" else name


def _tests(project: NodeProject, via: str, notes: list[str]) -> Detected | None:
    script = project.scripts.get("test")
    if script is None or _PLACEHOLDER.search(script):
        return None
    command = project.run("test")
    runner, why = runner_of(project, script)
    if runner is None:
        # Still a gate: its exit status judges, though its failing tests cannot be named.
        gate = _command("tests", command, 1800.0)
        return Detected(gate, f"{why}: a command gate (its failures are not named by test)")
    binary = _BINARY.get(runner)
    if binary is not None and not project.installed(binary):
        notes.append(_missing(runner, binary, "tests", project))
        return None
    if runner == "node-test" and shutil.which("node") is None:
        notes.append(_note("no tests gate: package.json runs node --test, and node is not on PATH"))
        return None
    spec = SuiteGate(name="tests", kind="suite", runner=runner, command=command)
    return Detected(spec, f"{why}, {via}")


def _missing(package: str, binary: str, gate: str, project: NodeProject) -> str:
    return _note(
        f"no {gate} gate: package.json declares {package}, but node_modules/.bin has no "
        f"{binary} (run `{project.manager} install` in the repository, or configure the gates "
        "in .stepswitch.toml)"
    )
