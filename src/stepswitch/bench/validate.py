"""`validate_task`: a task is valid when its hidden tests tell the start from the reference.

In a temporary folder, through the same grading steps a run gets (`grading_folder`):
- the untouched start fails its hidden tests: pytest reports at least one failed or errored test
  (a collection error counts: a feature's new function does not exist yet); a pass, a command
  that collects nothing, a usage error or a crash makes the task invalid;
- the start passes its own visible tests, but for those task.toml declares failing at the start
  (`failing_at_start`, the bug report's test), which it must fail, each and no other;
- the reference (solution/*.patch applied with `git apply`) passes the hidden tests twice in a row
  (a second run catches flaky tests), and its own visible tests;
- the hidden test command does not pass once the hidden test files are gone (it must run them);
- the reference passes the task's gates other than tests (golden values, protected constants);
- nothing passes its per-test or whole-run limit;
- the task requires no package ssw's interpreter lacks (`requires`), else it cannot be judged;
- and, a warning only, the whole-run limit covers the hidden tests times the per-test limit (so a
  loaded machine, slowing every test to its limit, does not end the run before its tests do);
- and, a warning only, the hidden tests name no file of repo/ that `[tests] data` leaves out
  (found in their source: `undeclared_data_reads`), which the change could rewrite.
The first problem found is the reason; a crash of the validation itself is a reason too. Each
check done is kept, in order, with what it found (`TaskValidation.checks`); a check after the
first problem is not run. `validation_record` makes the machine-readable record of a whole
`ssw bench validate` (`--out FILE`, `--json`): when it started, on which commit, with which ssw,
and per task its folder's sha256, its checks and its verdict.
"""

from __future__ import annotations

import ast
import posixpath
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from stepswitch.bench.files import VALIDATE_KIND, TaskEntry, ValidationRecord
from stepswitch.bench.grading_folder import TestVerdict, grade, grading_env, run_pytest
from stepswitch.bench.grading_layout import copy_tree, is_test_file, lay_out
from stepswitch.bench.task import HIDDEN_FOLDER, Task, covers, missing_requirements
from stepswitch.gates.config import GateConfig, TestsGate, read_gate_config
from stepswitch.gates.suite import GateSuite
from stepswitch.util.git import GitResult, run_git
from stepswitch.util.hashing import folder_hashes, hash_path
from stepswitch.util.sandbox import Sandbox

REFERENCE_RUNS = 2


# The checks, in the order they run; each names what must hold.
CHECKS: dict[str, str] = {
    "start_fails_hidden": "the untouched start fails its hidden tests",
    "start_visible": "the start passes its own visible tests",
    "reference_applies": "the reference applies to the start",
    "reference_hidden_1": "the reference passes the hidden tests",
    "reference_hidden_2": "the reference passes the hidden tests again, the same tests",
    "reference_visible": "the reference passes its own visible tests",
    "needs_hidden": "the test command does not pass without the hidden tests",
    "reference_gates": "the reference passes the task's gates other than tests",
    "test_data_declared": "the files of repo/ the hidden tests name are declared test data "
    "(a warning, never a failure)",
}


class Invalid(Exception):
    """The reason a task is invalid (internal: validate_task returns it as data)."""


@dataclass(frozen=True)
class Check:
    name: str  # a key of CHECKS
    ok: bool
    found: str  # what it found, e.g. "1 failed: tests/test_x.py::test_y", "no gates"
    warning: bool = False  # ok, but `found` says what the task's author should look at


@dataclass(frozen=True)
class TaskValidation:
    task: str  # suite/id
    problem: str | None  # None: the task is valid
    start: TestVerdict | None = None  # the hidden tests on the untouched start
    reference: tuple[TestVerdict, ...] = ()  # the hidden tests on the reference, each run
    duration_s: float = 0.0
    checks: tuple[Check, ...] = ()  # in the order run; after the first problem none runs

    @property
    def valid(self) -> bool:
        return self.problem is None

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(c.found for c in self.checks if c.warning)


def _git(folder: Path, home: Path, *args: str) -> GitResult:
    ident = ["-c", "user.name=ssw", "-c", "user.email=ssw@localhost"]
    return run_git(folder, *ident, *args, env={"HOME": str(home)})


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _why(verdict: TestVerdict) -> str:
    shown = verdict.summary()
    if verdict.failing:
        shown += ": " + ", ".join(verdict.failing[:3])
    elif not verdict.report and verdict.output:
        shown += ": " + _first_line(verdict.output[-400:])
    return shown


def _apply_reference(task: Task, tree: Path, home: Path, found: _Found) -> None:
    """`tree`: a git repository of the start, committed, with the reference applied on top."""
    copy_tree(task.repo, tree)
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-qm", "start")):
        done = _git(tree, home, *args)
        if done.status != 0:
            raise RuntimeError(f"git {args[0]}: {_first_line(done.err)}")
    for patch in task.patches:
        done = _git(tree, home, "apply", "--whitespace=nowarn", str(patch.resolve()))
        if done.status != 0:
            rel = patch.relative_to(task.folder).as_posix()
            raise found.fail("reference_applies", f"{rel} does not apply: {_first_line(done.err)}")
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
    task: Task, tree: Path, scratch: Path, which: str, found: _Found, sandbox: Sandbox | None
) -> None:
    check = "start_visible" if which == "the start" else "reference_visible"
    spec = task.spec.tests
    verdict = run_pytest(
        task.visible_command,
        tree,
        per_test_timeout_s=spec.per_test_timeout_s,
        timeout_s=spec.timeout_s,
        scratch=scratch,
        sandbox=sandbox,
    )
    if verdict.timed_out:
        raise found.fail(check, f"{which}: visible tests timed out: {verdict.timed_out}")
    declared = task.failing_at_start if which == "the start" else frozenset()
    if declared:
        _fails_as_declared(verdict, declared, found)
        return
    if not verdict.passed:
        raise found.fail(check, f"{which} fails its own visible tests: {_why(verdict)}")
    found.ok(check, verdict.summary())


def _fails_as_declared(verdict: TestVerdict, declared: frozenset[str], found: _Found) -> None:
    """The start fails exactly the visible tests its task.toml declares (failing_at_start), and
    pytest got as far as running them: none more, none fewer, nothing that stopped it first."""
    failed = set(verdict.failing)
    if not verdict.report or verdict.failures + verdict.errors != len(failed):
        raise found.fail("start_visible", f"the start's visible tests gave {_why(verdict)}")
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
    """A warning when `tests` hidden tests, each at its per-test limit, outlast the whole run."""
    spec = task.spec.tests
    need = tests * spec.per_test_timeout_s
    if need <= spec.timeout_s:
        return None
    return (
        f"warning: timeout_s = {spec.timeout_s:g} is less than {tests} test{'s' * (tests != 1)} x "
        f"per_test_timeout_s = {spec.per_test_timeout_s:g} ({need:g} s): on a loaded machine the "
        f"whole-run limit can end the tests before theirs do; raise it to {need:g}"
    )


def _runs_without_hidden(
    task: Task, tree: Path, scratch: Path, found: _Found, sandbox: Sandbox | None
) -> None:
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
        sandbox=sandbox,
        config_from=task.repo,
    )
    if verdict.passed:
        raise found.fail(
            "needs_hidden",
            f"the test command passes without the hidden tests ({verdict.summary()}): "
            f"it must run {HIDDEN_FOLDER}/",
        )
    found.ok("needs_hidden", f"without {HIDDEN_FOLDER}/: {verdict.summary()}")


def _gates(task: Task, tree: Path, scratch: Path, found: _Found) -> None:
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
            f"the reference fails its gate {failed.name}: {_first_line(failed.report)}",
        )
    found.ok("reference_gates", "passed: " + ", ".join(g.name for g in gates))


PATH_CALLS = ("join", "Path", "PurePath", "PosixPath")  # calls whose arguments spell a path


def _pieces(node: ast.AST) -> list[ast.expr] | None:
    """The operands of `a / "b" / "c"` or the arguments of `join(a, "b")`, `Path(a, "b")`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        pieces: list[ast.expr] = []
        at: ast.expr = node
        while isinstance(at, ast.BinOp) and isinstance(at.op, ast.Div):
            pieces.insert(0, at.right)
            at = at.left
        return [at, *pieces]
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return list(node.args) if name in PATH_CALLS else None
    return None


def _children(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    return list(node.args) if isinstance(node, ast.Call) else []


def _spelt(node: ast.AST) -> str | None:
    """The path a node spells out: a string, or the strings ending a chain or a join, joined
    with "/"."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    tail: list[str] = []
    for piece in reversed(_pieces(node) or []):
        if not (isinstance(piece, ast.Constant) and isinstance(piece.value, str)):
            break
        tail.insert(0, piece.value)
    return "/".join(tail) if tail else None


def _named_paths(source: str) -> set[str]:
    """Every path the source spells out, relative (a leading "/", "./" or "../" taken off); a
    piece of a chain or a join counts only with the whole of it ("expected" in
    `ROOT / "expected" / "out.json"` names no folder)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    inner = {id(child) for node in ast.walk(tree) if _pieces(node) for child in _children(node)}
    named = set()
    for node in ast.walk(tree):
        text = None if id(node) in inner else _spelt(node)
        if text and "\n" not in text:
            path = posixpath.normpath(text)
            while path.startswith(("../", "/")):
                path = path.removeprefix("../").lstrip("/")
            if path not in ("", ".", ".."):
                named.add(path)
    return named


def undeclared_data_reads(task: Task) -> dict[str, list[str]]:
    """The files of the start that a hidden test's source names (a string literal, a `/` chain
    or a join of literals naming the file or its folder) and `[tests] data` does not declare,
    by hidden test file; code and test files are left out (reading the change's code is the
    point of a test). Static, so a path built at run time is not seen."""
    files = [
        rel
        for rel in sorted(p.relative_to(task.repo).as_posix() for p in task.repo.rglob("*"))
        if (task.repo / rel).is_file() and not rel.endswith(".py") and not is_test_file(Path(rel))
    ]
    found: dict[str, list[str]] = {}
    for test in sorted(task.hidden_tests.rglob("*.py")):
        named = _named_paths(test.read_text(encoding="utf-8", errors="replace"))
        reads = [
            rel
            for rel in files
            if any(rel == n or rel.startswith(n + "/") for n in named)
            and not covers(task.spec.tests.data, rel)
        ]
        if reads:
            found[test.relative_to(task.hidden_tests).as_posix()] = reads
    return found


def _test_data(task: Task, found: _Found) -> None:
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


@dataclass
class _Found:
    start: TestVerdict | None = None
    reference: list[TestVerdict] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def ok(self, name: str, found: str) -> None:
        self.checks.append(Check(name, True, found))

    def fail(self, name: str, problem: str) -> Invalid:
        self.checks.append(Check(name, False, problem))
        return Invalid(problem)


def _check(task: Task, tmp: Path, found: _Found, sandbox: Sandbox | None) -> None:
    scratch, home, tree = tmp / "scratch", tmp / "home", tmp / "tree"
    scratch.mkdir()
    home.mkdir()
    missing = missing_requirements(task)
    if missing:  # the start would fail for want of a package, not for the task's bug
        raise found.fail(
            "start_fails_hidden",
            f"cannot judge: the task requires {', '.join(missing)} beside ssw; install it there",
        )
    start = found.start = grade(task, task.repo, scratch, sandbox)
    if start.timed_out:
        raise found.fail("start_fails_hidden", f"start: timed out: {start.timed_out}")
    if start.passed:
        raise found.fail(
            "start_fails_hidden", f"the untouched start passes the hidden tests ({start.summary()})"
        )
    if not start.failed:
        raise found.fail(
            "start_fails_hidden", f"start: the hidden tests did not run ({_why(start)})"
        )
    found.ok("start_fails_hidden", _why(start))
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
            raise found.fail(check, f"the reference fails the hidden tests: {_why(verdict)}")
        if not verdict.passed:
            raise found.fail(check, f"the reference is flaky: passed, then {_why(verdict)}")
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
    found = _Found()
    problem: str | None = None
    with tempfile.TemporaryDirectory(prefix="ssw-validate-") as tmp:
        try:
            _check(task, Path(tmp), found, sandbox)
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
    )


def validate_tasks(
    tasks: Iterable[Task], jobs: int = 1, sandbox: Sandbox | None = None
) -> Iterator[TaskValidation]:
    """validate_task for each task, `jobs` at a time, in the order given."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        yield from pool.map(lambda task: validate_task(task, sandbox), tasks)


# --- the record: `ssw bench validate --out FILE` / `--json` ---

RECORD_SCHEMA = 1


def _verdict(verdict: TestVerdict) -> dict[str, object]:
    return {
        "exit_status": verdict.exit_status,
        "report": verdict.report,
        "tests": verdict.tests,
        "failures": verdict.failures,
        "errors": verdict.errors,
        "skipped": verdict.skipped,
        "timed_out": verdict.timed_out,
        "failing": list(verdict.failing),
        "summary": verdict.summary(),
        "duration_s": round(verdict.duration_s, 3),
    }


def task_sha256(task: Task) -> str:
    """The task folder's sha256 as the claims engine hashes a folder (util/hashing.py): its
    committed files' relative paths and sha256s, caches skipped."""
    return hash_path(task.folder, ".")


def task_sha256s(tasks: Sequence[Task]) -> list[str]:
    """`task_sha256` of each task, with one git call per suite instead of one per task."""
    return folder_hashes([task.folder for task in tasks])


def task_entry(task: Task, result: TaskValidation, sha256: str | None = None) -> dict[str, object]:
    """One task's part of the record (files.TaskEntry, as JSON data); `sha256` is its folder's
    hash taken before it was validated (default: now)."""
    entry = {
        "task": result.task,
        "suite": task.suite,
        "id": task.spec.id,
        "sha256": sha256 or task_sha256(task),
        "valid": result.valid,
        "problem": result.problem,
        "checks": [
            {"check": c.name, "ok": c.ok, "found": c.found, "warning": c.warning}
            for c in result.checks
        ],
        "not_run": [name for name in CHECKS if name not in {c.name for c in result.checks}],
        "start": _verdict(result.start) if result.start is not None else None,
        "reference": [_verdict(v) for v in result.reference],
        "duration_s": round(result.duration_s, 3),
    }
    return TaskEntry.model_validate(entry).model_dump(mode="json")


def validation_record(
    tasks: Sequence[Task],
    entries: Sequence[dict[str, object]],
    *,
    started_at: str,
    source: tuple[str | None, bool | None],
    finished_at: str,
    duration_s: float,
    command: Sequence[str],
    jobs: int,
    sandbox: str | None = None,
) -> dict[str, object]:
    """The whole validation: when, by which code, on which tasks (by sha256), and each verdict.
    `started_at` lets the claims engine refuse a validation made before a claim's registration;
    `source` is `record.source_commit()` taken then (the commit and whether the tree had
    changes), not at the end, when the checkout may have moved on. It is files.ValidationRecord,
    as JSON data."""
    from stepswitch import __version__
    from stepswitch.bench.record import relative_path, versions

    commit, dirty = source
    suites: dict[str, dict[str, object]] = {}
    for task in tasks:
        suite = suites.setdefault(
            task.suite,
            {
                "name": task.suite,
                "path": relative_path(task.folder.parent, Path.cwd()),
                "tasks": [],
            },
        )
        ids = suite["tasks"]
        assert isinstance(ids, list)
        ids.append(task.spec.id)
    valid = sum(bool(e["valid"]) for e in entries)
    record = {
        "schema_version": RECORD_SCHEMA,
        "kind": VALIDATE_KIND,
        "tool": {"name": "stepswitch", "version": __version__},
        "command": list(command),
        "commit": commit,
        "dirty": dirty,
        "versions": versions(),
        "jobs": jobs,
        "sandbox": sandbox,
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_s": round(duration_s, 1),
        "checks": dict(CHECKS),
        "suites": list(suites.values()),
        "totals": {"tasks": len(entries), "valid": valid, "invalid": len(entries) - valid},
        "tasks": list(entries),
    }
    return ValidationRecord.model_validate(record).model_dump(mode="json")
