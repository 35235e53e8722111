"""Files the model can write run in no Python of the gates at start-up: a `sitecustomize.py` or
`usercustomize.py` in the worktree, or a `.pth` in the sandbox's scratch home, runs neither in the
warm pytest, nor in a fresh `python -m pytest`, nor in the pre-flight's import check, so it can
neither watch nor force a verdict. And a warm pytest that did run such code (with the worktree
first on PYTHONPATH, as the gates had it before) is ended with everything that code started (a
thread, a `setsid` grandchild) as soon as it says it will not be used, not at the next stage.

Each runs on every sandbox backend that starts here; each has a control showing the route open
with the old arrangement. The probes hold flocks on files in the worktree, which the host can try
without waiting: a lock is free once every process holding it has ended."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import stepswitch
from stepswitch.errors import UsageError
from stepswitch.gates.config import GateConfig, TestsGate
from stepswitch.gates.interpreter import DEFERRED_PATH, Interpreter
from stepswitch.gates.suite import GateSuite
from stepswitch.gates.warm import SERVER, WarmPytest
from stepswitch.util.sandbox import Confinement, choose_sandbox, policy_for_worktree
from tests.gates import lock_freed, scratch_env
from tests.harness.repo import write_repo

CONFINING = ("bwrap", "unshare")
WAIT_S = 120.0  # an upper bound only, for a loaded machine: every wait ends at its event
PACKAGE = Path(stepswitch.__file__).resolve().parent
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"

BROKEN_CALC = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n",
    "tests/test_ops.py": """
        from calc.ops import add

        def test_add():
            assert add(2, 3) == 5
    """,
}


def _sandboxed(backend: str, root: Path, home: Path, env: dict[str, str]) -> Confinement | None:
    if backend == "none":
        return None
    try:
        sandbox = choose_sandbox(backend)
    except UsageError as exc:
        pytest.skip(f"{backend} does not run here: {exc}")
    # ssw's own package stays readable inside: the gates' plugin and start-up module are there.
    policy = policy_for_worktree(root, root, home, env, read_only=(PACKAGE,))
    return Confinement(sandbox, policy)


def _scratch_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "tmp").mkdir(parents=True)
    return home


def _base_env(home: Path) -> dict[str, str]:
    return scratch_env(home, TMPDIR=str(home / "tmp"))


# -- start-up files: a marker, and a forced pass ------------------------------------------------


def _forcing(marker: Path) -> str:
    """Python that notes it ran in `marker`, then ends its process with status 0 (a pass)."""
    return f"import os; open({str(marker)!r}, 'a').write('ran\\n'); os._exit(0)"


def _python_with_a_user_site(home: Path) -> tuple[Path, Path]:
    """An interpreter whose user site is on (not a virtualenv's), and that site in `home`."""
    python = Path(sys.base_prefix) / "bin" / f"python{VERSION}"
    if not python.is_file():
        pytest.skip(f"no base interpreter at {python}")
    code = "import site; print(site.ENABLE_USER_SITE, site.getusersitepackages())"
    done = subprocess.run(
        [str(python), "-c", code],
        env={"HOME": str(home), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    )
    enabled, where = done.stdout.split()
    if enabled != "True":
        pytest.skip(f"{python} has no user site here")
    return python, Path(where)


def _hostile_worktree(tmp_path: Path, kind: str) -> tuple[Path, Path, Path, dict[str, str]]:
    """(worktree, marker, python, env): a flat project whose test fails, with a start-up file of
    `kind` that would note itself in `marker` and force the process to exit 0."""
    home = _scratch_home(tmp_path)
    root = tmp_path / "repo"
    marker = root / "started.log"
    env = _base_env(home)
    files = dict(BROKEN_CALC)
    python = Path(sys.executable)
    if kind == "sitecustomize":
        files["sitecustomize.py"] = _forcing(marker) + "\n"
    else:
        python, user_site = _python_with_a_user_site(home)
        env["PYTHONPATH"] = sysconfig.get_paths()["purelib"]  # ssw's pytest, for that one
        if kind == "usercustomize":
            files["usercustomize.py"] = _forcing(marker) + "\n"
        else:  # a .pth in the scratch home, which the model's commands can write
            user_site.mkdir(parents=True)
            (user_site / "ssw_hostile.pth").write_text(_forcing(marker) + "\n")
    return write_repo(root, files, commit=True), marker, python, env


def _suite(
    root: Path, python: Path, env: dict[str, str], confinement: Confinement | None, warm: bool
) -> GateSuite:
    command = f"{shlex.quote(str(python))} -m pytest -q -x -p no:cacheprovider"
    gate = TestsGate(name="tests", kind="tests", command=command, warm=warm)
    return GateSuite(
        GateConfig((gate,), "test"),
        root,
        env,
        interpreter=Interpreter(python, "the test's"),
        state_dir=root.parent / f"state-{warm}",
        confinement=confinement,
    )


def _as_before(env: dict[str, str]) -> dict[str, str]:
    """A gate environment as the gates made it before: the worktree's folders first on
    PYTHONPATH itself, the user site on."""
    old = {k: v for k, v in env.items() if k != "PYTHONNOUSERSITE"}
    old["PYTHONPATH"] = old.pop(DEFERRED_PATH)
    return old


KINDS = ("sitecustomize", "usercustomize", "user-site-pth")
FORCED_EXIT = "pytest exited 0 but ended before its session did"


def _hostile_suites(
    tmp_path: Path, backend: str, kind: str
) -> tuple[Path, Path, GateSuite, GateSuite]:
    """A worktree with a start-up file of `kind` planted, its marker, and its gates confined by
    `backend`: one suite with a warm pytest and one without."""
    root, marker, python, env = _hostile_worktree(tmp_path, kind)
    confinement = _sandboxed(backend, root, Path(env["HOME"]), env)
    warm, fresh = (_suite(root, python, env, confinement, warm=w) for w in (True, False))
    return root, marker, warm, fresh


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backend", (*CONFINING, "none"))
def test_no_file_the_model_can_write_runs_when_a_gates_python_starts(
    tmp_path: Path, backend: str, kind: str
) -> None:
    root, marker, warm, fresh = _hostile_suites(tmp_path, backend, kind)
    assert warm.preflight().found == {"calc": str(root / "calc" / "__init__.py")}
    for suite in (warm, fresh):
        result = suite.run(["calc/ops.py"])
        suite.close()
        assert result.failed is not None and "assert -1 == 5" in result.report
        assert [s.warm for s in result.test_stages] == [suite is warm] * len(result.test_stages)
    assert not marker.exists()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backend", (*CONFINING, "none"))
def test_the_control_with_the_old_environment_the_same_file_ran_and_forced_a_pass(
    tmp_path: Path, backend: str, kind: str
) -> None:
    _, marker, warm, fresh = _hostile_suites(tmp_path, backend, kind)
    for suite in (warm, fresh):
        suite.gate_env = _as_before(suite.gate_env)

    def runs() -> int:
        return marker.read_text().count("ran\n") if marker.exists() else 0

    with pytest.raises(UsageError, match="could not check the imports"):
        warm.preflight()
    assert runs() == 1
    result = warm.run(["calc/ops.py"])
    warm.close()
    # Forced to exit 0 before any test: only the session record (gates/session_record.py), a
    # second line of defence, still tells that pytest never ran its session.
    assert result.failed is not None and FORCED_EXIT in result.report, result.report
    assert "the warm pytest is not used: it did not start" in " ".join(result.warm_notes)
    assert runs() >= 3  # the warm pytest, then at least one stage run fresh
    before = runs()
    again = fresh.run(["calc/ops.py"])
    assert again.failed is not None and FORCED_EXIT in again.report
    assert runs() > before


# -- a warm pytest that ran the worktree's code ---------------------------------------------------

# With the worktree first on PYTHONPATH the server imports this at start-up, says it is not used
# (a module from the tests' folder), and then lives on: its thread is not a daemon.
LINGERING = """
import fcntl, os, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))


def hold(name):
    lock = open(os.path.join(HERE, name + ".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def keep_writing(name):
    while True:
        with open(os.path.join(HERE, name + ".pid"), "a") as out:
            out.write(f"{os.getpid()}\\n")
        time.sleep(0.2)


took, told = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        kept = hold("grandchild")
        os.write(told, b"g")
        keep_writing("grandchild")
    os._exit(0)
os.wait()
os.read(took, 1)
taken = threading.Event()


def thread():
    kept = hold("thread")
    taken.set()
    keep_writing("thread")


threading.Thread(target=thread, daemon=False).start()
taken.wait()
with open(os.path.join(HERE, "held.fifo"), "w") as fifo:
    fifo.write("held")
"""
LOCKS = ("thread.lock", "grandchild.lock")


def _lingering(tmp_path: Path, backend: str) -> tuple[Path, dict[str, str], Confinement]:
    home = _scratch_home(tmp_path)
    files = {**BROKEN_CALC, "sitecustomize.py": LINGERING}
    root = write_repo(tmp_path / "repo", files)
    os.mkfifo(root / "held.fifo")
    env = {**_base_env(home), "PYTHONPATH": str(root)}  # the old arrangement
    confinement = _sandboxed(backend, root, home, env)
    assert confinement is not None
    return root, env, confinement


@contextlib.contextmanager
def _held(root: Path) -> Iterator[Callable[[], bool]]:
    """Whether the worktree's sitecustomize has taken both its locks (it says so on the fifo),
    waiting at most WAIT_S."""
    fd = os.open(root / "held.fifo", os.O_RDONLY | os.O_NONBLOCK)

    def said() -> bool:
        readable, _, _ = select.select([fd], [], [], WAIT_S)
        return bool(readable) and os.read(fd, 16) == b"held"

    try:
        yield said
    finally:
        os.close(fd)


def _unlocked(path: Path) -> bool:
    """Whether no process holds the flock on `path` now (no waiting)."""
    with open(path, "a") as file:
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def _freed(path: Path) -> bool:
    """Whether the flock on `path` is released within WAIT_S."""
    return lock_freed(path, WAIT_S)


@contextlib.contextmanager
def _warm_on_lingering(
    tmp_path: Path, backend: str
) -> Iterator[tuple[Path, Callable[[], bool], WarmPytest]]:
    """A warm pytest started, confined by `backend`, on the worktree whose sitecustomize takes
    locks and leaves processes behind: the worktree, whether it took them, and the warm pytest
    (closed at the end)."""
    root, env, confinement = _lingering(tmp_path, backend)
    with _held(root) as held:
        warm = WarmPytest(Path(sys.executable), env, root, confinement)
        try:
            yield root, held, warm
        finally:
            warm.close()


@pytest.mark.parametrize("backend", CONFINING)
def test_a_warm_pytest_that_ran_the_worktrees_code_is_ended_at_once_not_at_the_next_stage(
    tmp_path: Path, backend: str
) -> None:
    with _warm_on_lingering(tmp_path, backend) as (root, held, warm):
        assert held(), "the worktree's sitecustomize never took its locks"
        # Nothing asks whether it is ready, no stage runs: ssw hears the refusal by itself.
        assert all(_freed(root / lock) for lock in LOCKS)
        assert not warm.ready() and "sitecustomize" in warm.why
    assert (root / "thread.pid").read_text() and (root / "grandchild.pid").read_text()


@pytest.mark.parametrize("backend", CONFINING)
def test_once_a_warm_pytest_is_said_unusable_nothing_it_started_runs(
    tmp_path: Path, backend: str
) -> None:
    with _warm_on_lingering(tmp_path, backend) as (root, held, warm):
        assert held()
        assert not warm.ready()
        # No waiting: `ready` answers once the whole sandbox is gone, not only its first
        # process (the namespace would still be dying).
        assert all(_unlocked(root / lock) for lock in LOCKS)


@pytest.mark.parametrize("backend", CONFINING)
def test_the_control_left_alone_a_refused_warm_pytest_keeps_what_the_worktree_code_started(
    tmp_path: Path, backend: str
) -> None:
    root, env, confinement = _lingering(tmp_path, backend)
    # The server started as WarmPytest starts it, with nobody acting on its hello until a stage
    # asks: what ssw did before.
    ours, theirs = socket.socketpair()
    argv = confinement.wrap([sys.executable, str(SERVER), str(theirs.fileno())], root)
    with _held(root) as held:
        server = subprocess.Popen(
            argv,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
        )
        theirs.close()
        try:
            assert held()
            ours.settimeout(WAIT_S)
            hello = json.loads(ours.makefile("rb").readline())
            assert hello["ready"] is False and "sitecustomize" in hello["why"]
            assert not any(_unlocked(root / lock) for lock in LOCKS)  # both still running
        finally:
            children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text()
            for pid in children.split():  # the namespace's first process: all of it goes
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
            ours.close()
