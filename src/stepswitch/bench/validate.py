"""`validate_task`: a task is valid when its hidden tests tell the start from the reference.

In a temporary folder, through the same grading steps a run gets (`grading_folder`):
- the untouched start fails its hidden tests: pytest reports at least one failed or errored test
  (a collection error counts: a feature's new function does not exist yet); a pass, a command
  that collects nothing, a usage error or a crash makes the task invalid;
- with graded ids (`fail_to_pass`, `pass_to_pass`: SWE-bench's), the start fails each
  fail_to_pass test and passes each pass_to_pass one;
- the start passes its own visible tests (a command other than pytest, another language's runner,
  by its exit status), but for those task.toml declares failing at the start
  (`failing_at_start`, the bug report's test), which it must fail, each and no other; a start
  with no tests of its own has none to run (its hidden tests alone judge it);
- the reference (solution/*.patch applied with `git apply`) passes the hidden tests twice in a row
  (a second run catches flaky tests), and its own visible tests;
- the hidden test command does not pass once the hidden test files are gone (it must run them);
- the reference passes the task's gates other than tests (golden values, protected constants);
- nothing passes its per-test or whole-run limit;
- the task requires no package ssw's interpreter lacks (`requires`), else it cannot be judged;
- a start whose hidden tests time out is invalid unless task.toml declares the bug a hang
  (`start_hangs`);
- the commands its tests run (`requires_tools`: node, go, cargo) are on PATH, else the task is
  not judged here (`TaskValidation.unjudged`: neither valid nor counted invalid, and said);
- and, a warning only, the whole-run limit covers the hidden tests times each one's wall-clock
  backstop (so a hanging start, or a loaded machine, does not end the run before its tests do);
- and, a warning only, the hidden tests name no file of repo/ that `[tests] data` leaves out
  (found in their source: `undeclared_data_reads`), which the change could rewrite.
The first problem found is the reason; a crash of the validation itself is a reason too. Each
check done is kept, in order, with what it found (`TaskValidation.checks`); a check after the
first problem is not run. `validation_record.py` makes the machine-readable record of a whole
`ssw bench validate` (`--out FILE`, `--json`): when it started, on which commit, with which ssw,
and per task its folder's sha256, its checks and its verdict.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from stepswitch.bench.data_reads import undeclared_data_reads
from stepswitch.bench.grading_folder import grade, grading_env, run_command, run_task_pytest
from stepswitch.bench.grading_layout import copy_tree, lay_out
from stepswitch.bench.grading_timeout import WALL_FACTOR, backstop_s
from stepswitch.bench.task import HIDDEN_FOLDER, Task
from stepswitch.bench.task_needs import missing_requirements, missing_tools
from stepswitch.bench.validation_record import task_entry, task_sha256, task_sha256s
from stepswitch.bench.validation_result import (
    CHECKS,
    Check,
    Found,
    Invalid,
    TaskValidation,
    Unjudged,
    why_of,
)
from stepswitch.bench.verdict import TestVerdict
from stepswitch.gates.config import GateConfig, TestsGate, read_gate_config
from stepswitch.gates.suite import GateSuite
from stepswitch.util.git import GitResult, run_git
from stepswitch.util.sandbox_backends import Sandbox
from stepswitch.util.text import first_line

REFERENCE_RUNS = 2


def _git(folder: Path, home: Path, *args: str) -> GitResult:
    ident = ["-c", "user.name=ssw", "-c", "user.email=ssw@localhost"]
    return run_git(folder, *ident, *args, env={"HOME": str(home)})


def _apply_reference(task: Task, tree: Path, home: Path, found: Found) -> None:
    """`tree`: a git repository of the start, committed, with the reference applied on top."""
    copy_tree(task.repo, tree)
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "start")):
        done = _git(tree, home, *args)
        if done.status != 0:
            raise RuntimeError(f"git {args[0]}: {first_line(done.err)}")
    for patch in task.patches:
        done = _git(tree, home, "apply", "--whitespace=nowarn", str(patch.resolve()))
        if done.status != 0:
            rel = patch.relative_to(task.folder).as_posix()
            raise found.fail("reference_applies", f"{rel} does not apply: {first_line(done.err)}")
    shown = ", ".join(p.relative_to(task.folder).as_posix() for p in task.patches)
    for rel in task.data_files:
        changed = tree / rel
        if not changed.is_file() or changed.read_bytes() != (task.repo / rel).read_bytes():
            raise found.fail(
                "reference_applies",
                f"{shown} changes {rel}, declared test data: grading puts the start's back",
            )
    found.ok("reference_applies", f"git apply: {shown}")


def _visible(
    task: Task, tree: Path, scratch: Path, which: str, found: Found, sandbox: Sandbox | None
) -> None:
    check = "start_visible" if which == "the start" else "reference_visible"
    if not task.visible_tests:
        found.ok(check, "no visible tests: the hidden tests alone judge the task")
        return
    if not task.visible_is_pytest:  # another language's runner: its exit status says
        _visible_by_status(task, tree, scratch, which, found, sandbox)
        return
    verdict = run_task_pytest(task, task.visible_command, tree, scratch, sandbox)
    if verdict.timed_out:
        raise found.fail(check, f"{which}: visible tests timed out: {verdict.timed_out}")
    declared = task.failing_at_start if which == "the start" else frozenset()
    if declared:
        _fails_as_declared(verdict, declared, found)
        return
    if not verdict.passed:
        raise found.fail(check, f"{which} fails its own visible tests: {why_of(verdict)}")
    found.ok(check, verdict.summary())


def _visible_by_status(
    task: Task, tree: Path, scratch: Path, which: str, found: Found, sandbox: Sandbox | None
) -> None:
    check = "start_visible" if which == "the start" else "reference_visible"
    command = task.visible_command
    ran = run_command(
        command, tree, timeout_s=task.spec.tests.timeout_s, scratch=scratch, sandbox=sandbox
    )
    if ran.timed_out:
        raise found.fail(check, f"{which}: visible tests timed out: {ran.timed_out}")
    if ran.exit_status != 0:
        tail = ran.output.strip().splitlines()[-3:]
        raise found.fail(
            check,
            f"{which} fails its own visible tests: {command[0]} exit {ran.exit_status}: "
            + " | ".join(line.strip() for line in tail),
        )
    found.ok(check, f"{command[0]} exit 0")


def _fails_as_declared(verdict: TestVerdict, declared: frozenset[str], found: Found) -> None:
    """The start fails exactly the visible tests its task.toml declares (failing_at_start), and
    pytest got as far as running them: none more, none fewer, nothing that stopped it first."""
    failed = set(verdict.failing)
    if not verdict.report or verdict.failures + verdict.errors != len(failed):
        raise found.fail("start_visible", f"the start's visible tests gave {why_of(verdict)}")
    if failed - declared:
        extra = ", ".join(sorted(failed - declared))
        raise found.fail("start_visible", f"the start fails visible tests not declared: {extra}")
    if declared - failed:
        passing = ", ".join(sorted(declared - failed))
        raise found.fail(
            "start_visible", f"declared failing at the start (failing_at_start) but not: {passing}"
        )
    found.ok("start_visible", f"{verdict.summary()}; fails as declared: {len(declared)}")


def _whole_run_short(task: Task, tests: int) -> str | None:
    """A warning when `tests` hidden tests, each ended by its wall-clock backstop (WALL_FACTOR
    times its CPU limit: a test that hangs, or one slowed by a loaded machine), outlast the whole
    run."""
    spec = task.spec.tests
    need = backstop_s(tests, spec.per_test_timeout_s)
    if need <= spec.timeout_s:
        return None
    return (
        f"warning: timeout_s = {spec.timeout_s:g} is less than {tests} test{'s' * (tests != 1)} x "
        f"per_test_timeout_s = {spec.per_test_timeout_s:g} x {WALL_FACTOR} (a test's wall-clock "
        f"backstop) = {need:g} s: a start whose tests hang, or a loaded machine, can end the "
        f"run before the tests' own limits do; raise it to {need:g}"
    )


def _runs_without_hidden(
    task: Task, tree: Path, scratch: Path, found: Found, sandbox: Sandbox | None
) -> None:
    if task.spec.tests.overlay:
        _runs_overlaid(task, found)
        return
    folder = Path(tempfile.mkdtemp(prefix="no-hidden-", dir=scratch)) / "repo"
    lay_out(task, tree, folder)
    hidden = folder / HIDDEN_FOLDER
    for path in sorted(hidden.rglob("*"), reverse=True):
        if path.is_file() or path.is_symlink():
            path.unlink()
    verdict = run_task_pytest(
        task, task.command, folder, scratch, sandbox, task.repo, task.graded_ids
    )
    if verdict.passed:
        raise found.fail(
            "needs_hidden",
            f"the test command passes without the hidden tests ({verdict.summary()}): "
            f"it must run {HIDDEN_FOLDER}/",
        )
    found.ok("needs_hidden", f"without {HIDDEN_FOLDER}/: {verdict.summary()}")


def _runs_overlaid(task: Task, found: Found) -> None:
    """Overlaid hidden tests change the start's own test files, which pass on the reference
    as they were: what must hold is that the run takes its tests from a hidden file (the
    graded ids' files, else the command's arguments)."""
    named = [node.partition("::")[0] for node in task.graded_ids] or [
        word.partition("::")[0] for word in task.command[1:] if not word.startswith("-")
    ]
    ran = sorted({rel for rel in named if (task.hidden_tests / rel).is_file()})
    if not ran:
        raise found.fail(
            "needs_hidden",
            "the test command runs no file of tests/: the hidden tests, laid over the tree, "
            "must be what it runs",
        )
    found.ok("needs_hidden", f"runs the hidden {', '.join(ran)}")


def _gates(task: Task, tree: Path, scratch: Path, found: Found) -> None:
    config = task.gates or read_gate_config(tree)
    gates = () if config is None else tuple(g for g in config.gates if not isinstance(g, TestsGate))
    if config is None or not gates:  # the tests gate is the visible run, checked above
        found.ok("reference_gates", "no gates other than tests")
        return
    work = Path(tempfile.mkdtemp(prefix="gates-", dir=scratch))
    for sub in ("home", "tmp"):
        (work / sub).mkdir()
    env = grading_env(work / "home", work / "tmp", work)
    result = GateSuite(GateConfig(gates, config.source), tree, env).run(None, "HEAD")
    failed = result.failed
    if failed is not None:
        raise found.fail(
            "reference_gates",
            f"the reference fails its gate {failed.name}: {first_line(failed.report)}",
        )
    found.ok("reference_gates", "passed: " + ", ".join(g.name for g in gates))


def _test_data(task: Task, found: Found) -> None:
    reads = undeclared_data_reads(task)
    if not reads:
        declared = len(task.data_files)
        found.ok(
            "test_data_declared",
            f"{declared} declared, no other file of repo/ named by the hidden tests"
            if declared
            else "the hidden tests name no data file of repo/",
        )
        return
    shown = "; ".join(f"{test}: {', '.join(files[:5])}" for test, files in reads.items())
    found.checks.append(
        Check(
            "test_data_declared",
            True,
            "warning: the hidden tests name files of repo/ that [tests] data does not declare, "
            f"so the change can rewrite what they read ({shown})",
            warning=True,
        )
    )


def _start_by_ids(task: Task, scratch: Path, found: Found, sandbox: Sandbox | None) -> None:
    """The start fails every fail_to_pass test (a failure, an error, a skip or not collected)
    and passes every pass_to_pass one: two runs, each graded by its own ids."""
    spec = task.spec.tests
    start = found.start = grade(task, task.repo, scratch, sandbox, spec.fail_to_pass)
    if start.timed_out:
        raise found.fail("start_fails_hidden", f"start: timed out: {start.timed_out}")
    if not start.report:
        raise found.fail(
            "start_fails_hidden", f"start: the hidden tests did not run ({why_of(start)})"
        )
    if start.passed_tests:
        raise found.fail(
            "start_fails_hidden",
            f"the untouched start passes {start.passed_tests} of the {len(spec.fail_to_pass)} "
            "fail_to_pass tests: each must fail before the change",
        )
    shown = f"fail_to_pass: {why_of(start)}"
    if spec.pass_to_pass:
        kept = grade(task, task.repo, scratch, sandbox, spec.pass_to_pass)
        if not kept.passed:
            raise found.fail(
                "start_fails_hidden", f"the start fails pass_to_pass tests: {why_of(kept)}"
            )
        shown += f"; pass_to_pass: {kept.summary()}"
    found.ok("start_fails_hidden", shown)


def _start_fails(task: Task, scratch: Path, found: Found, sandbox: Sandbox | None) -> None:
    """The untouched start fails its hidden tests: one failed or errored test at least."""
    start = found.start = grade(task, task.repo, scratch, sandbox)
    if start.timed_out and task.spec.tests.start_hangs:
        found.ok(
            "start_fails_hidden", f"start: timed out, as start_hangs declares: {start.timed_out}"
        )
        return
    if start.timed_out:
        hint = " (if the bug is a hang, declare start_hangs = true under [tests])"
        raise found.fail("start_fails_hidden", f"start: timed out: {start.timed_out}{hint}")
    if start.passed:
        raise found.fail(
            "start_fails_hidden", f"the untouched start passes the hidden tests ({start.summary()})"
        )
    if not start.failed:
        raise found.fail(
            "start_fails_hidden", f"start: the hidden tests did not run ({why_of(start)})"
        )
    found.ok("start_fails_hidden", why_of(start))


def _check(task: Task, tmp: Path, found: Found, sandbox: Sandbox | None) -> None:
    scratch, home, tree = tmp / "scratch", tmp / "home", tmp / "tree"
    scratch.mkdir()
    home.mkdir()
    tools = missing_tools(task)
    if tools:  # this machine lacks the task's language: not judged, and said (not invalid)
        problem = f"cannot judge here: the task's tests run {', '.join(tools)}, not on PATH"
        found.checks.append(Check("start_fails_hidden", False, problem))
        raise Unjudged(problem)
    missing = missing_requirements(task)
    if missing:  # the start would fail for want of a package, not for the task's bug
        raise found.fail(
            "start_fails_hidden",
            f"cannot judge: the task requires {', '.join(missing)} beside ssw; install it there",
        )
    if task.graded_ids:
        _start_by_ids(task, scratch, found, sandbox)
    else:
        _start_fails(task, scratch, found, sandbox)
    copy_tree(task.repo, tmp / "start")
    _visible(task, tmp / "start", scratch, "the start", found, sandbox)
    _apply_reference(task, tree, home, found)
    for attempt in range(REFERENCE_RUNS):
        check = f"reference_hidden_{attempt + 1}"
        verdict = grade(task, tree, scratch, sandbox)
        found.reference.append(verdict)
        if verdict.timed_out:
            raise found.fail(check, f"reference: timed out: {verdict.timed_out}")
        if not verdict.passed and attempt == 0:
            raise found.fail(check, f"the reference fails the hidden tests: {why_of(verdict)}")
        if not verdict.passed:
            raise found.fail(check, f"the reference is flaky: passed, then {why_of(verdict)}")
        first = found.reference[0].tests
        if verdict.tests != first:
            raise found.fail(check, f"the reference is flaky: {first} tests, then {verdict.tests}")
        short = _whole_run_short(task, verdict.tests) if attempt == 0 else None
        shown = f"{verdict.summary()}; {short}" if short else verdict.summary()
        found.checks.append(Check(check, True, shown, warning=bool(short)))
    _visible(task, tree, scratch, "the reference", found, sandbox)
    _runs_without_hidden(task, tree, scratch, found, sandbox)
    _gates(task, tree, scratch, found)
    _test_data(task, found)


def validate_task(task: Task, sandbox: Sandbox | None = None) -> TaskValidation:
    """Check one task, its test runs inside `sandbox` as grading runs them (None: unconfined);
    never raises for a problem of the task, which is returned as `problem`."""
    began = time.monotonic()
    found = Found()
    problem: str | None = None
    unjudged = False
    with tempfile.TemporaryDirectory(prefix="ssw-validate-") as tmp:
        try:
            _check(task, Path(tmp), found, sandbox)
        except Unjudged as exc:
            problem, unjudged = str(exc), True
        except Invalid as exc:
            problem = str(exc)
        except Exception as exc:  # a crash is data: the task is reported, not lost
            problem = f"validation crashed: {type(exc).__name__}: {exc}"
            done = {c.name for c in found.checks}
            crashed = next((name for name in CHECKS if name not in done), "reference_gates")
            found.checks.append(Check(crashed, False, problem))
    return TaskValidation(
        task.name,
        problem,
        found.start,
        tuple(found.reference),
        time.monotonic() - began,
        tuple(found.checks),
        unjudged,
    )


def validate_tasks(
    tasks: Iterable[Task], jobs: int = 1, sandbox: Sandbox | None = None
) -> Iterator[TaskValidation]:
    """validate_task for each task, `jobs` at a time, in the order given."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        yield from pool.map(lambda task: validate_task(task, sandbox), tasks)


__all__ = [
    "CHECKS",
    "REFERENCE_RUNS",
    "Check",
    "Invalid",
    "TaskValidation",
    "task_entry",
    "task_sha256",
    "task_sha256s",
    "undeclared_data_reads",
    "validate_task",
    "validate_tasks",
]
