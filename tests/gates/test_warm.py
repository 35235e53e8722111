"""The warm pytest (gates.warm): the test stages of a gate run fork from a process that has pytest
imported already. The verdicts are those of a fresh pytest; nothing it starts outlives its gate
run, a stage's timeout or ssw itself; a command or an environment it is not an exact stand-in for
runs the usual way, and says so."""

from __future__ import annotations

import os
import select
import shlex
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.tools import pytest_command
from stepswitch.gates.warm import SERVER, pytest_args
from stepswitch.util.sandbox import Sandbox
from tests.gates import confined_suite, left_out_plugins, lock_freed
from tests.gc_check import GC_TEST
from tests.harness.repo import write_repo

CALC = {
    "calc/__init__.py": "",
    "calc/ops.py": """
        def add(a, b):
            return a + b
    """,
    "tests/test_ops.py": """
        from calc.ops import add

        def test_add():
            assert add(2, 3) == 5
    """,
}


def _suite(root: Path, tmp: Path, *, timeout_s: float = 600.0, warm: bool = True) -> GateSuite:
    gate = TestsGate(
        name="tests", kind="tests", command=pytest_command(root), timeout_s=timeout_s, warm=warm
    )
    return GateSuite(GateConfig((gate,), "test"), root, dict(os.environ), state_dir=tmp / "state")


def _servers(root: Path) -> list[int]:
    """The warm pytest processes serving `root` (one just started may not show yet: the kernel
    sets a new program's command line after its parent's `exec` wait has returned)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if str(SERVER).encode() in cmdline and Path(cwd) == root.resolve():
            found.append(int(entry.name))
    return found


def _gone(pid: int, within_s: float = 60.0) -> bool:
    """Whether process `pid` ends within `within_s` (woken by its pidfd, no polling)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], within_s)
        return bool(ready)
    finally:
        os.close(fd)


def test_only_a_plain_pytest_command_of_the_gates_python_is_stood_in_for(tmp_path: Path) -> None:
    python = Path(sys.executable)
    env = {"PATH": f"{python.parent}{os.pathsep}/usr/bin", **left_out_plugins()}
    command = f"{shlex.quote(str(python))} -m pytest -q -x -p no:cacheprovider"
    assert pytest_args(command, python, env) == ["-q", "-x", "-p", "no:cacheprovider"]
    assert pytest_args(f"{python.name} -m pytest -q", python, env) == ["-q"]  # found on PATH
    assert pytest_args(f"cd sub && {command}", python, env) is None
    assert pytest_args(f"{command} | tee log", python, env) is None
    assert pytest_args(f"{command} $EXTRA", python, env) is None
    assert pytest_args("/usr/bin/python3 -m pytest -q", python, env) is None  # another python
    assert pytest_args(f"{python} -m unittest", python, env) is None
    assert pytest_args(f"{python} -m pytest 'unclosed", python, env) is None


def test_warm_stages_give_a_fresh_pytests_verdicts(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", CALC, commit=True)
    (root / "calc" / "ops.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    verdicts = {}
    for warm in (True, False):
        suite = _suite(root, tmp_path / str(warm), warm=warm)
        result = suite.run(["calc/ops.py"])
        suite.close()
        assert result.failed is not None and result.failed.name.startswith("tests:")
        assert [s.warm for s in result.test_stages] == [warm] * len(result.test_stages)
        failing = next(s for s in result.test_stages if not s.passed)
        verdicts[warm] = (failing.first_failure, "assert -1 == 5" in result.report)
    assert verdicts[True] == verdicts[False] == ("tests/test_ops.py::test_add", True)
    assert _servers(root) == []


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "fresh"])
def test_a_stage_collects_its_own_garbage_with_pytests_objects_frozen(
    tmp_path: Path, warm: bool
) -> None:
    # The server imports with the collector off and freezes what it imported, and the stages'
    # plugin freezes what exists when pytest loads it (ADR 0019): a stage, warm or fresh, finds
    # the collector on, collecting what the stage itself makes, and pytest's objects out of its
    # sight.
    root = write_repo(tmp_path / "repo", {**CALC, "tests/test_gc.py": GC_TEST}, commit=True)
    suite = _suite(root, tmp_path, warm=warm)
    result = suite.run(None)
    suite.close()
    assert result.failed is None, result.report
    assert [s.warm for s in result.test_stages] == [warm]


def test_the_warm_pytest_lasts_one_gate_run_and_ssw_run_starts_the_next_as_an_edit_begins(
    tmp_path: Path,
) -> None:
    root = write_repo(tmp_path / "repo", CALC, commit=True)
    suite = _suite(root, tmp_path)
    assert suite.run(None).passed
    assert _servers(root) == []  # `ssw gates`: none after the run
    suite.warm_up_for_edit()
    assert _servers(root) == []  # nor before an edit: only `ssw run` keeps one warm
    suite.keep_warm = True
    assert suite.run(None).passed
    assert _servers(root) == []  # no edit yet: a server now might never be used
    suite.warm_up_for_edit()
    assert "ready" in suite.warm_line()
    (first,) = _servers(root)  # `ssw run`: it waits for the edit's gate run
    assert suite.run(None).passed
    assert _gone(first) and _servers(root) == []
    suite.warm_up_for_edit()
    assert suite.warm_ready()  # started: past the moment its command line is being set up
    (second,) = _servers(root)
    assert second != first
    suite.close()
    assert _gone(second) and _servers(root) == []


def _leaving_a_process(tmp_path: Path, then: str) -> Path:
    """CALC with a test that starts `sleep 300`, writes its pid to child.pid, then does `then`."""
    files = dict(CALC)
    files["tests/test_child.py"] = f"""
        import subprocess
        import time
        from pathlib import Path

        def test_start_a_child():
            child = subprocess.Popen(["sleep", "300"])
            Path("child.pid").write_text(str(child.pid))
            {then}
    """
    return write_repo(tmp_path / "repo", files, commit=True)


def test_a_stage_that_times_out_leaves_nothing_running(tmp_path: Path) -> None:
    root = _leaving_a_process(tmp_path, "time.sleep(300)")
    suite = _suite(root, tmp_path, timeout_s=4.0)
    result = suite.run(None)
    assert result.failed is not None and "timed out after 4 s" in result.failed.report
    assert result.test_stages[0].warm
    assert _gone(int((root / "child.pid").read_text()))
    assert _servers(root) == []


def test_what_a_passing_stage_leaves_running_is_ended_with_it(tmp_path: Path) -> None:
    root = _leaving_a_process(tmp_path, "assert child.poll() is None")
    suite = _suite(root, tmp_path)
    suite.keep_warm = True
    result = suite.run(None)
    assert result.passed and result.test_stages[0].warm
    assert _gone(int((root / "child.pid").read_text()))
    suite.close()


def test_a_module_the_tests_can_write_keeps_the_stages_fresh_and_says_so(tmp_path: Path) -> None:
    files = dict(CALC)
    # pytest imports `calendar`; python -m pytest puts the folder first on sys.path, so this one.
    files["calendar.py"] = """
        import importlib.util, sysconfig, os
        _spec = importlib.util.spec_from_file_location(
            "calendar", os.path.join(sysconfig.get_paths()["stdlib"], "calendar.py")
        )
        _real = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_real)
        globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
    """
    root = write_repo(tmp_path / "repo", files, commit=True)
    (root / "calc" / "ops.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    suite = _suite(root, tmp_path)
    suite.keep_warm = True
    result = suite.run(["calc/ops.py"])
    assert result.failed is not None and not any(s.warm for s in result.test_stages)
    # Beside it, the impacted stage of every test file was skipped (ADR 0076).
    (note,) = [n for n in result.warm_notes if "tests:impacted skipped" not in n]
    assert "ran as a fresh pytest" in note and "calendar" in note and "calendar.py" in note
    assert f"[ssw: {note}]" in result.failed.log
    assert "calendar" in suite.warm_line()
    assert _servers(root) == []  # it is not tried again for this task
    suite.close()


def test_off_in_the_tests_gate_runs_every_stage_fresh(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", CALC, commit=True)
    suite = _suite(root, tmp_path, warm=False)
    suite.keep_warm = True
    result = suite.run(None)
    assert result.passed and not result.test_stages[0].warm and not result.warm_notes
    assert suite.warm_line() == "gates: warm pytest: off (warm = false)"
    assert _servers(root) == []


def test_killing_ssw_ends_its_warm_pytest(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", CALC, commit=True)
    script = textwrap.dedent(f"""
        import os, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from tests.gates.test_warm import _suite
        suite = _suite(Path({str(root)!r}), Path({str(tmp_path)!r}))
        suite.keep_warm = True
        suite.warm_up()
        assert suite.warm_ready()
        print("ready", flush=True)
        sys.stdin.read()
    """)
    ssw = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert ssw.stdout is not None and ssw.stdout.readline() == "ready\n"
        (server,) = _servers(root)
        ssw.send_signal(signal.SIGKILL)
        ssw.wait()
        assert _gone(server)
    finally:
        ssw.kill()
        ssw.wait()


def _confined_suite(tmp_path: Path, root: Path, sandbox: Sandbox) -> GateSuite:
    """The tests gate of `root` in `sandbox`, with the policy a run gives it."""
    package = Path(__file__).resolve().parents[2] / "src" / "stepswitch"
    gate = TestsGate(name="tests", kind="tests", command=pytest_command(root))
    return confined_suite(tmp_path, root, gate, sandbox, (package,))


@pytest.mark.slow
def test_inside_the_sandbox_a_test_cannot_read_the_warm_pytest(tmp_path: Path) -> None:
    from stepswitch.util.sandbox import choose_sandbox

    try:
        sandbox = choose_sandbox("bwrap")
    except UsageError as exc:
        pytest.skip(f"bubblewrap does not run here: {exc}")
    files = dict(CALC)
    files["tests/test_parent.py"] = """
        import os

        def test_the_process_it_forked_from_is_unreadable():
            parent = os.getppid()
            for name in ("environ", "mem"):
                try:
                    open(f"/proc/{parent}/{name}", "rb").read(1)
                except PermissionError:
                    continue
                raise AssertionError(f"/proc/{parent}/{name} is readable")
    """
    root = write_repo(tmp_path / "repo", files, commit=True)
    suite = _confined_suite(tmp_path, root, sandbox)
    result = suite.run(None)
    assert result.test_stages and result.test_stages[0].warm, result.warm_notes
    assert result.passed, result.report


# A test that leaves a process in a session of its own, out of reach of the stage's process group,
# holding a flock on a file of the worktree until it is killed.
ESCAPING = """
    import fcntl
    import os
    import signal
    from pathlib import Path

    def test_leave_a_grandchild_in_a_session_of_its_own():
        took, told = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                held = open(Path(__file__).parents[1] / "escaped.lock", "w")
                fcntl.flock(held, fcntl.LOCK_EX)
                os.write(told, b"x")
                while True:
                    signal.pause()
            os._exit(0)
        os.wait()
        assert os.read(took, 1) == b"x"
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ("bwrap", "unshare"))
def test_what_a_stage_started_in_a_session_of_its_own_ends_with_the_gate_run(
    tmp_path: Path, backend: str
) -> None:
    from stepswitch.util.sandbox import choose_sandbox

    try:
        sandbox = choose_sandbox(backend)
    except UsageError as exc:
        pytest.skip(f"{backend} does not run here: {exc}")
    root = write_repo(tmp_path / "repo", {**CALC, "tests/test_escape.py": ESCAPING}, commit=True)
    suite = _confined_suite(tmp_path, root, sandbox)
    result = suite.run(None)
    assert result.passed and result.test_stages[0].warm, result.report
    # When the gate run returns, its warm pytest's sandbox is ending, all of it: the lock the
    # escaped grandchild held is free once the kernel has ended it (a bounded wait, no sleep).
    assert lock_freed(root / "escaped.lock", 60.0)
