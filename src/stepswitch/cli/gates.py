"""`ssw gates PATH [--changed FILE...]`: prepare the repository as a run does (agent/prepare.py:
the run's sandbox and environment), then run its gates outside a task and print the verdicts, so
they are the verdicts a run gets (ADR 0056). Exit 0 when every gate that ran passed, 1
otherwise; 2 for a ConfigError, a --changed path outside PATH or naming no file (now or at HEAD),
a plain folder with no gates, a sandbox that cannot run, or tests that would import the project
from outside PATH (the pre-flight)."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path, PurePosixPath

from stepswitch.agent.prepare import prepare_run, unconfined_notices
from stepswitch.errors import SswError, UsageError
from stepswitch.gates.base import BaseTree, BaseUnreadable
from stepswitch.gates.config import GateConfig
from stepswitch.gates.detect import load_gates
from stepswitch.gates.interpreter import check_imports, checkout_of, gate_environment
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.suite_result import SuiteResult
from stepswitch.registry.presets import ProviderSpec, load_registry
from stepswitch.util.sandbox import choose_sandbox, sandbox_home
from stepswitch.util.text import escape_controls


def _registry() -> Mapping[str, ProviderSpec]:
    """The presets, for the names of the keys no command may read; none when they cannot be
    read (the gates' environment is an allow-list all the same)."""
    try:
        return load_registry()
    except SswError:
        return {}


def _relative(root: Path, path: str, base: BaseTree | None) -> str:
    """`path` relative to `root`: a UsageError when it is outside it, or names no file there
    (a file deleted since HEAD is a change; a name that is in neither is a typo)."""
    given = Path(path).expanduser()
    target = given if given.is_absolute() else root / given
    try:
        relative = target.resolve().relative_to(root).as_posix()
    except ValueError as exc:
        raise UsageError(f"--changed {path}: not inside {root}") from exc
    if target.exists() or target.is_symlink() or relative in _at_head(base):
        return relative
    where = f"{root}, neither in its working tree nor at HEAD" if base is not None else f"{root}"
    raise UsageError(
        f"--changed {path}: no such file in {where} (fix: name a changed file, relative to PATH)"
    )


def _at_head(base: BaseTree | None) -> frozenset[str]:
    """The files (and their folders) of HEAD under root; none outside a repository."""
    if base is None:
        return frozenset()
    try:
        files = base.entries(base.commit("HEAD"))
    except BaseUnreadable:  # no commit yet: nothing was deleted since
        return frozenset()
    folders = {str(parent) for name in files for parent in PurePosixPath(name).parents}
    return frozenset(files) | folders


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def render(root: Path, config: GateConfig, result: SuiteResult, changed: list[str] | None) -> str:
    """The verdicts as terminal text: the failing gate's output, escaped, under them."""
    names = ", ".join(g.name for g in config.gates)
    lines = [f"gates for {root} ({config.source}: {names})", *config.notes]
    lines += [f"  {name}: {why}" for name, why in config.reasons]
    lines.append(
        "changed: " + (", ".join(changed) if changed else "not given, so every gate runs in full")
    )
    if result.interpreter:
        lines.append(result.interpreter)
    stages = {s.name: s for s in result.test_stages}
    for r in result.results:
        note = ""
        stage = stages.get(r.name)
        if stage is not None and stage.why:  # a suite gate's stage: what its runner selected
            ran = "" if stage.tests is None else f"ran {stage.tests} test{_s(stage.tests)}: "
            note = f"  {ran}{stage.why}"
        elif stage is not None:
            ran = "all test files" if stage.files is None else f"{stage.files} test files"
            if stage.tests is not None:
                ran = f"{stage.tests} test{_s(stage.tests)} in {ran}"
            note = f"  ran {ran}"
            if r.name.endswith(":impacted"):
                note += f" of {len(result.impacted)} impacted"
            if stage.warm:
                note += " (warm pytest)"
        lines.append(
            f"  {'pass' if r.passed else 'FAIL':<4}  {r.name:<22} {r.duration_s:7.2f} s{note}"
        )
    lines += [f"  note  {note}" for note in result.warm_notes]
    lines += [f"  skip  {name:<22}   no changed file matches its globs" for name in result.skipped]
    lines += [f"  -     {name:<22}   not run: an earlier gate failed" for name in result.not_run]
    failed = result.failed
    verdict = "passed" if failed is None else f"FAILED at {failed.name}"
    failing = next((s for s in result.test_stages if not s.passed), None)
    if failing is not None:
        first = (
            f"first failing verdict {_seconds(result.first_failure_s)} "
            f"({failing.name}: {failing.first_failure or 'see the report'})"
        )
    elif result.test_stages:
        first = f"first test verdict (a pass) {_seconds(result.first_verdict_s)}"
    else:
        first = "no test stage ran"
    lines.append(
        f"verdict: {verdict}; {first}, impacted stages {_seconds(result.impacted_s)}, "
        f"full suite {_seconds(result.full_s)}, total {_seconds(result.total_s)}"
    )
    if failed is not None:
        lines += ["", failed.report]
    return escape_controls("\n".join(lines))  # a command's output and names from the repository


def gates_command(
    path: Path, changed: list[str], sandbox: str = "auto", network: bool = False
) -> tuple[str, int]:
    """Run the gates of the repository at `path` for a change to `changed` (relative to `path`;
    empty: every gate, full suite), prepared as a run prepares them: in the run's sandbox
    (`sandbox`, `network` as `ssw run` takes them) with the run's environment, on the checkout
    as it is. Returns the text to print and the exit code (0 or 1). Raises UsageError for a path
    that is no folder or a sandbox that cannot run, ConfigError for a bad gate table."""
    root = path.expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"{path} is not a folder")
    config = load_gates(root)
    base = BaseTree.find(root)
    if not config.gates and base is None:  # a plain folder: a wrong PATH, most likely
        raise UsageError(
            f"{path} is not in a git repository and has no gates to run "
            "(fix: name a repository, or configure its gates in .stepswitch.toml)"
        )
    if not config.gates:  # what detection left out says why (a runner not installed...)
        lines = [f"gates for {root} ({config.source}): none, nothing to check", *config.notes]
        return escape_controls("\n".join(lines)), 0
    files = [_relative(root, c, base) for c in changed] or None
    confining = choose_sandbox(sandbox)
    with ExitStack() as cleanup:
        home = cleanup.enter_context(sandbox_home())
        prepared = prepare_run(
            root,
            repo=checkout_of(root),  # a run's worktree's: the user's checkout, with its .venv
            tree=None,  # the checkout as it is, judged against HEAD
            sandbox=confining,
            home=home,
            registry=_registry(),
            cleanup=cleanup,
            network=network,
            preflight=False,  # its gate run is the verdict
        )
        notes = [*unconfined_notices(confining, home), _check_imports(prepared.gates.suite)]
        result = prepared.gates.suite.run(files, "HEAD")
    text = render(root, prepared.gates.config, result, files)
    return "\n".join([*filter(None, notes), text]), 0 if result.passed else 1


def _check_imports(suite: GateSuite) -> str:
    """The pre-flight's import check belongs to the untouched start: a setup that cannot import
    the project is a UsageError (exit 2), but a change that breaks the import is the gates' to
    judge (their tests fail on it). Returns a note for the second case, else ""."""
    try:
        suite.preflight()
        return ""
    except UsageError as broken:
        tree = suite.tree
        if tree is None or not tree.changed_paths():
            raise
        with tempfile.TemporaryDirectory(prefix="ssw-start-") as folder:
            start = Path(folder) / "start"
            tree.check_out("HEAD", start)
            at_start = start  # check_out writes the prefix's files at the top of `start`
            interpreter = suite.interpreter
            env = gate_environment(at_start, suite.env, interpreter)
            check_imports(at_start, env, interpreter)  # raises: the setup, not the change
        return f"gates: the change breaks the import the untouched start passes ({broken})"
