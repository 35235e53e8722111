"""Whose fault a missing verdict is. What the graded tree does to grading (never finishing, ending
pytest before its report, a committed link leading out of the tree) is a failed task run with
the run's own outcome and a reason; what breaks in ssw (the task's hidden tests gone, a sandbox
that cannot start) stays a harness error. And the hidden tests are read-only where the graded
code runs, so it cannot rewrite one before pytest reads it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stepswitch.bench.executor import inline_executor
from stepswitch.bench.gitops import commit_base
from stepswitch.bench.grading_folder import TestVerdict, grade
from stepswitch.bench.grading_layout import copy_tree
from stepswitch.bench.results import ResultRow
from stepswitch.bench.runner import BenchResult, BenchSpec, run_bench
from stepswitch.bench.task import Task, load_suite, load_task
from stepswitch.bench.taskrun import _grade_into
from stepswitch.errors import UsageError
from stepswitch.util.sandbox import Bwrap, Sandbox, SandboxPolicy, Unshare, choose_sandbox

from . import BUGGY, FIXED, TASK_TOML, write_task
from .fakes import FakeContestant

CONFINING = ("bwrap", "unshare")
LIMIT_S = 6  # the whole hidden run's limit in these tasks

# Only where grading runs the code (a grading folder has .ssw_hidden/), not in the agent's gates.
IN_GRADING = "\nimport os as _os\n\nif _os.path.isdir('.ssw_hidden'):\n"


def _backend(name: str) -> Sandbox:
    try:
        return choose_sandbox(name)
    except UsageError as exc:
        pytest.skip(str(exc))


def _bench(root: Path, contestants: list[FakeContestant], sandbox: str) -> BenchResult:
    spec = BenchSpec(
        root=root / "runs" / "b1",
        tasks=load_suite(root / "suite"),
        contestants=contestants,
        sandbox=sandbox,
    )
    return run_bench(spec, executor=inline_executor, resamples=50)


def _row(result: BenchResult, contestant: str) -> ResultRow:
    [row] = [r for r in result.rows if r.contestant == contestant]
    return row


def _calc(extra: str) -> tuple[tuple[str, str], ...]:
    return (("calc.py", BUGGY + IN_GRADING + extra),)


# --- what the graded tree does: a failed task run -------------------------------------------


def _faults(host: Path) -> list[FakeContestant]:
    """Contestants whose trees fault grading; `host` is a folder of the machine's."""
    return [
        # Waits rather than spins: the whole run's limit is wall time, and a spinning test's CPU
        # limit has tests of its own (test_validate); spinning here cost 2 x LIMIT_S of CPU.
        FakeContestant(
            "never_ends", "write", files=_calc("    import time\n    time.sleep(3600)\n")
        ),
        FakeContestant("exits", "write", files=_calc("    _os._exit(0)\n")),
        FakeContestant("aborts", "write", files=_calc("    _os.abort()\n")),
        FakeContestant("links_out", "write", attack="rm calc.py && ln -s /etc/passwd calc.py"),
        FakeContestant("links_up", "write", attack="ln -s ../../../.. notes"),
        # Where the start's visible tests are put back: before, they were written into `host`.
        FakeContestant("links_host", "write", attack=f"rm -r tests && ln -s {host} tests"),
    ]


@pytest.fixture(scope="module", params=CONFINING)
def faulted(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, BenchResult]:
    _backend(request.param)
    tmp = tmp_path_factory.mktemp(f"faults-{request.param}")
    toml = TASK_TOML.format(name="t1").replace("timeout_s = 60", f"timeout_s = {LIMIT_S}")
    write_task(tmp, "t1", {"task.toml": toml})
    host = tmp / "host-folder"
    host.mkdir()
    return host, _bench(tmp, _faults(host), request.param)


@pytest.mark.slow
def test_graded_code_that_never_finishes_is_a_failed_run_timed_out(
    faulted: tuple[Path, BenchResult],
) -> None:
    row = _row(faulted[1], "never_ends")
    assert (row.passed, row.outcome, row.run_outcome) == (False, "done", "done")
    assert row.reason == f"grading: timed out: the run passed its {LIMIT_S} s limit"


@pytest.mark.slow
def test_graded_code_that_ends_pytest_at_import_is_a_failed_run_without_a_report(
    faulted: tuple[Path, BenchResult],
) -> None:
    exits, aborts = _row(faulted[1], "exits"), _row(faulted[1], "aborts")
    assert (exits.passed, exits.outcome, exits.verdict) == (
        False,
        "done",
        "no JUnit report (exit 0)",
    )
    assert exits.reason == (
        "grading: the hidden tests gave no report: the graded code ended pytest first (exit 0)"
    )
    assert (aborts.passed, aborts.outcome) == (False, "done")
    # How the abort shows depends on the backend (bwrap: exit 134; unshare runs python as its
    # namespace's init, which SIGABRT cannot end, so abort() ends it another way).
    assert aborts.reason.startswith("grading: the hidden tests gave no report: the graded code")


@pytest.mark.slow
def test_a_committed_link_leading_out_of_the_tree_is_a_failed_run_naming_it(
    faulted: tuple[Path, BenchResult],
) -> None:
    host, result = faulted
    rows = [_row(result, name) for name in ("links_out", "links_up", "links_host")]
    for row in rows:
        patch = (result.root / row.folder / "change.patch").read_text()
        assert "new file mode 120000" in patch  # committed as a link: the change holds it
        # The agent's gates refused the link too (ssw:protected): the outcome stays that run's.
        assert (row.passed, row.outcome, row.run_outcome) == (False, "gates_failed", "gates_failed")
    out, up, into_host = (row.reason for row in rows)
    assert out == "grading: calc.py is a symbolic link leading out of the tree (/etc/passwd)"
    assert up == "grading: notes is a symbolic link leading out of the tree (../../../..)"
    assert into_host == f"grading: tests is a symbolic link leading out of the tree ({host})"
    assert list(host.iterdir()) == []  # nothing was put back through the link


# --- what breaks in ssw: a harness error --------------------------------------------------------


@pytest.mark.slow
def test_hidden_tests_gone_from_the_task_are_a_harness_error(tmp_path: Path) -> None:
    # Unconfined only: the hidden tests are laid out on the host, before any sandbox starts.
    write_task(tmp_path, "t1")
    row = _row(_bench(tmp_path, [FakeContestant("vanish", "vanish")], "none"), "vanish")
    # It changes nothing (no_change), so grading runs on the start, where the tests are gone.
    assert (row.passed, row.outcome, row.run_outcome) == (False, "harness_error", "no_change")
    assert row.reason.startswith("grading crashed: FileNotFoundError: ")


class _BindingNothing(Bwrap):
    """bwrap itself, asked to bind a source that does not exist: it never starts the command."""

    def argv(self, command: list[str], policy: SandboxPolicy, cwd: Path) -> list[str]:
        argv = super().argv(command, policy, cwd)
        return [argv[0], "--ro-bind", "/nonexistent-ssw-source", "/nonexistent", *argv[1:]]


def _cannot_start(name: str, sandbox: Sandbox, tmp_path: Path) -> Sandbox:
    if name == "bwrap":
        assert isinstance(sandbox, Bwrap)
        return _BindingNothing(sandbox.binary)
    assert isinstance(sandbox, Unshare)
    return Unshare(sandbox.tools, tmp_path / "no-stage")  # its new root's mount point is missing


def _graded_row(task: Task, sandbox: Sandbox, tmp_path: Path) -> ResultRow:
    """The start of `task`, committed and graded as a task run grades it."""
    copy_tree(task.repo, tmp_path / "repo")
    copy = commit_base(tmp_path / "repo", tmp_path / "git")
    row = ResultRow(
        task=task.name,
        suite=task.suite,
        contestant="c",
        contestant_kind="policy",
        attempt=0,
        outcome="done",
    )
    for sub in ("scratch", "record"):
        (tmp_path / sub).mkdir()
    _grade_into(
        row, task, copy, copy.base_commit, tmp_path / "scratch", tmp_path / "record", sandbox
    )
    return row


@pytest.mark.parametrize("name", CONFINING)
def test_a_sandbox_that_cannot_start_is_a_harness_error(name: str, tmp_path: Path) -> None:
    working = _backend(name)
    task = load_task(write_task(tmp_path / "tasks"))
    # The control: in the working sandbox the same tree gets its verdict.
    graded = _graded_row(task, working, tmp_path / "working")
    assert (graded.outcome, graded.verdict) == ("done", "1 failed")
    row = _graded_row(task, _cannot_start(name, working, tmp_path), tmp_path / "broken")
    assert (row.passed, row.outcome) == (False, "harness_error")
    said = "(exit 1): bwrap: Can't find source path" if name == "bwrap" else "(exit 32): mount:"
    assert row.reason.startswith(f"grading gave no verdict: no JUnit report {said}")


# --- the hidden tests are read-only where the graded code runs ---------------------------------

HIDDEN: dict[str, str | bytes | None] = {
    "tests/test_hidden.py": None,
    "tests/test_a_double.py": """
        from calc import double


        def test_double():
            assert double(2) == 4
    """,
    "tests/test_b_add.py": """
        import json
        from pathlib import Path

        from calc import add


        def test_add():
            for a, b, want in json.loads((Path(__file__).parent / "cases.json").read_text()):
                assert add(a, b) == want
    """,
    "tests/cases.json": "[[2, 3, 5]]\n",
}

# Collecting test_a_double imports calc, before test_b_add is collected: rewrite it to pass.
AT_IMPORT = """
    try:
        with open(".ssw_hidden/test_b_add.py", "w") as _f:
            _f.write("def test_add():\\n    pass\\n")
    except OSError:
        pass
"""

# test_double runs before test_add: the cases test_add reads then agree with the buggy add.
IN_A_TEST = """
def double(x):
    try:
        with open(".ssw_hidden/cases.json", "w") as f:
            f.write("[[2, 3, -1]]")
    except OSError:
        pass
    return 2 * x
"""

REWRITERS = [
    FakeContestant("at_import", "write", files=_calc(AT_IMPORT.lstrip("\n"))),
    FakeContestant("in_a_test", "write", files=(("calc.py", BUGGY + IN_A_TEST),)),
]


@pytest.fixture(scope="module", params=("none", *CONFINING))
def rewritten(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, BenchResult]:
    _backend(request.param)
    tmp = tmp_path_factory.mktemp(f"rewrite-{request.param}")
    write_task(tmp, "t1", HIDDEN)
    return request.param, _bench(tmp, REWRITERS, request.param)


@pytest.mark.slow
@pytest.mark.parametrize("contestant", ("at_import", "in_a_test"))
def test_graded_code_cannot_rewrite_a_hidden_test_in_the_sandbox(
    rewritten: tuple[str, BenchResult], contestant: str
) -> None:
    sandbox, result = rewritten
    row = _row(result, contestant)
    if sandbox == "none":
        # The control: unconfined, the hidden folder is writable and the rewrite passes.
        assert (row.passed, row.verdict) == (True, "2 passed")
    else:
        assert (row.passed, row.outcome, row.verdict) == (False, "done", "1 failed, 1 passed")


@pytest.mark.parametrize("name", CONFINING)
def test_pytest_caching_beside_read_only_hidden_tests_does_not_change_the_verdict(
    name: str, tmp_path: Path
) -> None:
    """The command lets pytest keep its cache, and no configuration puts its root elsewhere."""
    sandbox = _backend(name)
    files: dict[str, str | bytes | None] = {
        "task.toml": TASK_TOML.format(name="t").replace(" -p no:cacheprovider", ""),
        "repo/pyproject.toml": None,
    }
    task = load_task(write_task(tmp_path / "tasks", "t", files))
    verdicts: dict[str, TestVerdict] = {}
    for calc in (FIXED, BUGGY):
        tree = tmp_path / f"tree-{len(verdicts)}"
        shutil.copytree(task.repo, tree)
        (tree / "calc.py").write_text(calc)
        scratch = tmp_path / f"scratch-{len(verdicts)}"
        scratch.mkdir()
        verdicts[calc] = grade(task, tree, scratch, sandbox)
    assert verdicts[FIXED].passed, verdicts[FIXED].output
    assert verdicts[BUGGY].summary() == "1 failed"
