"""`ssw gates PATH [--changed FILE...]`: run a repository's gates outside a task and print the
verdicts. Exit 0 when every gate that ran passed, 1 otherwise (a ConfigError is exit 2)."""

from __future__ import annotations

from pathlib import Path

from stepswitch.errors import SswError, UsageError
from stepswitch.gates.config import GateConfig
from stepswitch.gates.detect import load_gates
from stepswitch.gates.suite import GateSuite, SuiteResult
from stepswitch.util.env import clean_env


def _secret_names() -> frozenset[str]:
    try:
        from stepswitch.registry.presets import load_registry

        return frozenset(s.api_key_env for s in load_registry().values() if s.api_key_env)
    except SswError:
        return frozenset()  # the generic secret-name filter still applies


def _relative(root: Path, path: str) -> str:
    given = Path(path)
    if given.is_absolute():
        try:
            return given.resolve().relative_to(root).as_posix()
        except ValueError as exc:
            raise UsageError(f"--changed {path}: not inside {root}") from exc
    return given.as_posix().removeprefix("./")


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def render(root: Path, config: GateConfig, result: SuiteResult, changed: list[str] | None) -> str:
    names = ", ".join(g.name for g in config.gates)
    lines = [f"gates for {root} ({config.source}: {names})"]
    lines.append(
        "changed: " + (", ".join(changed) if changed else "not given, so every gate runs in full")
    )
    for r in result.results:
        note = ""
        if r.name.endswith(":impacted"):
            note = f"  impacted test files: {len(result.impacted)}"
        lines.append(
            f"  {'pass' if r.passed else 'FAIL':<4}  {r.name:<22} {r.duration_s:7.2f} s{note}"
        )
    lines += [f"  skip  {name:<22}   no changed file matches its globs" for name in result.skipped]
    lines += [f"  -     {name:<22}   not run: an earlier gate failed" for name in result.not_run]
    failed = result.failed
    verdict = "passed" if failed is None else f"FAILED at {failed.name}"
    lines.append(
        f"verdict: {verdict}; first test verdict {_seconds(result.first_verdict_s)}, "
        f"impacted stage {_seconds(result.impacted_s)}, full suite {_seconds(result.full_s)}, "
        f"total {_seconds(result.total_s)}"
    )
    if failed is not None:
        lines += ["", failed.report]
    return "\n".join(lines)


def gates_command(path: Path, changed: list[str]) -> tuple[str, int]:
    """Run the gates of the repository at `path` for a change to `changed` (relative to `path`;
    empty: every gate, full suite). Returns the text to print and the exit code (0 or 1).
    Raises UsageError for a path that is no folder and ConfigError for a bad gate table."""
    root = path.expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"{path} is not a folder")
    config = load_gates(root)
    if not config.gates:
        return f"gates for {root} ({config.source}): none, nothing to check", 0
    files = [_relative(root, c) for c in changed] or None
    env = clean_env(_secret_names())
    result = GateSuite(config, root, env, log_dir=None).run(files, "HEAD")
    return render(root, config, result, files), 0 if result.passed else 1
