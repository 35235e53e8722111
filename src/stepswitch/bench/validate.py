"""`validate_task`: a task is valid when its hidden tests tell the start from the reference.

In a temporary folder, through the same grading steps a run gets (`grading_folder`):
- the untouched start fails its hidden tests: pytest reports at least one failed or errored test
  (a collection error counts: a feature's new function does not exist yet); a pass, a command
  that collects nothing, a usage error or a crash makes the task invalid;
- the start passes its own visible tests (a run's pre-flight needs a green baseline);
- the reference (solution/*.patch applied with `git apply`) passes the hidden tests twice in a row
  (a second run catches flaky tests), and its own visible tests;
- the hidden test command does not pass once the hidden test files are gone (it must run them);
- the reference passes the task's gates other than tests (golden values, protected constants);
- nothing passes its per-test or whole-run limit.
The first problem found is the reason; a crash of the validation itself is a reason too.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from stepswitch.bench.grading_folder import (
    TestVerdict,
    copy_tree,
    grade,
    grading_env,
    lay_out,
    run_pytest,
)
from stepswitch.bench.task import HIDDEN_FOLDER, Task
from stepswitch.gates.config import GateConfig, TestsGate, read_gate_config
from stepswitch.gates.suite import GateSuite

GIT_TIMEOUT_S = 60.0
REFERENCE_RUNS = 2


class Invalid(Exception):
    """The reason a task is invalid (internal: validate_task returns it as data)."""


@dataclass(frozen=True)
class TaskValidation:
    task: str  # suite/id
    problem: str | None  # None: the task is valid
    start: TestVerdict | None = None  # the hidden tests on the untouched start
    reference: tuple[TestVerdict, ...] = ()  # the hidden tests on the reference, each run
    duration_s: float = 0.0

    @property
    def valid(self) -> bool:
        return self.problem is None


def _git(folder: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    ident = ["-c", "user.name=ssw", "-c", "user.email=ssw@localhost", "-c", "commit.gpgsign=false"]
    return subprocess.run(
        ["git", *ident, *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_S,
        check=False,
    )


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _why(verdict: TestVerdict) -> str:
    shown = verdict.summary()
    if verdict.failing:
        shown += ": " + ", ".join(verdict.failing[:3])
    elif not verdict.report and verdict.output:
        shown += ": " + _first_line(verdict.output[-400:])
    return shown


def _apply_reference(task: Task, tree: Path, home: Path) -> None:
    """`tree`: a git repository of the start, committed, with the reference applied on top."""
    copy_tree(task.repo, tree)
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "start")):
        done = _git(tree, home, *args)
        if done.returncode != 0:
            raise RuntimeError(f"git {args[0]}: {_first_line(done.stderr)}")
    for patch in task.patches:
        done = _git(tree, home, "apply", "--whitespace=nowarn", str(patch.resolve()))
        if done.returncode != 0:
            rel = patch.relative_to(task.folder).as_posix()
            raise Invalid(f"{rel} does not apply: {_first_line(done.stderr)}")


def _visible(task: Task, tree: Path, scratch: Path, which: str) -> None:
    spec = task.spec.tests
    verdict = run_pytest(
        task.visible_command,
        tree,
        per_test_timeout_s=spec.per_test_timeout_s,
        timeout_s=spec.timeout_s,
        scratch=scratch,
    )
    if verdict.timed_out:
        raise Invalid(f"{which}: visible tests timed out: {verdict.timed_out}")
    if not verdict.passed:
        raise Invalid(f"{which} fails its own visible tests: {_why(verdict)}")


def _runs_without_hidden(task: Task, tree: Path, scratch: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="no-hidden-", dir=scratch)) / "repo"
    lay_out(task, tree, folder)
    hidden = folder / HIDDEN_FOLDER
    for path in sorted(hidden.rglob("*"), reverse=True):
        if path.is_file() or path.is_symlink():
            path.unlink()
    spec = task.spec.tests
    verdict = run_pytest(
        task.command,
        folder,
        per_test_timeout_s=spec.per_test_timeout_s,
        timeout_s=spec.timeout_s,
        scratch=scratch,
    )
    if verdict.passed:
        raise Invalid(
            f"the test command passes without the hidden tests ({verdict.summary()}): "
            f"it must run {HIDDEN_FOLDER}/"
        )


def _gates(task: Task, tree: Path, scratch: Path) -> None:
    config = task.gates or read_gate_config(tree)
    if config is None:
        return
    gates = tuple(g for g in config.gates if not isinstance(g, TestsGate))  # the visible run
    if not gates:
        return
    work = Path(tempfile.mkdtemp(prefix="gates-", dir=scratch))
    for sub in ("home", "tmp"):
        (work / sub).mkdir()
    env = grading_env(work / "home", work / "tmp", work)
    result = GateSuite(GateConfig(gates, config.source), tree, env).run(None, "HEAD")
    failed = result.failed
    if failed is not None:
        raise Invalid(f"the reference fails its gate {failed.name}: {_first_line(failed.report)}")


@dataclass
class _Found:
    start: TestVerdict | None = None
    reference: list[TestVerdict] = field(default_factory=list)


def _check(task: Task, tmp: Path, found: _Found) -> None:
    scratch, home, tree = tmp / "scratch", tmp / "home", tmp / "tree"
    scratch.mkdir()
    home.mkdir()
    start = found.start = grade(task, task.repo, scratch)
    if start.timed_out:
        raise Invalid(f"start: timed out: {start.timed_out}")
    if start.passed:
        raise Invalid(f"the untouched start passes the hidden tests ({start.summary()})")
    if not start.failed:
        raise Invalid(f"start: the hidden tests did not run ({_why(start)})")
    copy_tree(task.repo, tmp / "start")
    _visible(task, tmp / "start", scratch, "the start")
    _apply_reference(task, tree, home)
    for attempt in range(REFERENCE_RUNS):
        verdict = grade(task, tree, scratch)
        found.reference.append(verdict)
        if verdict.timed_out:
            raise Invalid(f"reference: timed out: {verdict.timed_out}")
        if not verdict.passed and attempt == 0:
            raise Invalid(f"the reference fails the hidden tests: {_why(verdict)}")
        if not verdict.passed:
            raise Invalid(f"the reference is flaky: passed, then {_why(verdict)}")
        first = found.reference[0].tests
        if verdict.tests != first:
            raise Invalid(f"the reference is flaky: {first} tests, then {verdict.tests}")
    _visible(task, tree, scratch, "the reference")
    _runs_without_hidden(task, tree, scratch)
    _gates(task, tree, scratch)


def validate_task(task: Task) -> TaskValidation:
    """Check one task; never raises for a problem of the task, which is returned as `problem`."""
    began = time.monotonic()
    found = _Found()
    problem: str | None = None
    with tempfile.TemporaryDirectory(prefix="ssw-validate-") as tmp:
        try:
            _check(task, Path(tmp), found)
        except Invalid as exc:
            problem = str(exc)
        except Exception as exc:  # a crash is data: the task is reported, not lost
            problem = f"validation crashed: {type(exc).__name__}: {exc}"
    return TaskValidation(
        task.name, problem, found.start, tuple(found.reference), time.monotonic() - began
    )


def validate_tasks(tasks: Iterable[Task], jobs: int = 1) -> Iterator[TaskValidation]:
    """validate_task for each task, `jobs` at a time, in the order given."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        yield from pool.map(validate_task, tasks)
