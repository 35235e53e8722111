"""Grading: a fresh folder outside the agent's worktree, the hidden tests copied in, one pytest run.

`grading_layout.lay_out` copies a run's tree (TreeGit.check_out gives the committed one), puts
back the start's test files and pytest configuration, removes what could stand in for the test
runner, and copies the hidden tests to `.ssw_hidden/`. `run_pytest` runs a command there inside
the sandbox the bench chose (util/sandbox.py: the grading folder and a scratch HOME writable, the
interpreters and the timeout plugin read-only, nothing else of the user's, no network), with a
scrubbed environment, a per-test limit (a small plugin, no dependency: grading_timeout.py) and a
limit on the whole run (the process group is killed). The verdict (verdict.py) is pytest's exit
status and its JUnit XML report, which pytest writes into a pipe: no path of the report exists
where the graded code runs, and what comes out of the pipe must be one JUnit document that
agrees with the exit status, or the run is graded as tampered with
(docs/decisions/0015-grading.md).
"""

from __future__ import annotations

import dataclasses
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from stepswitch.bench.files import GRADE_FILE, GradeFile, json_text
from stepswitch.bench.grading_layout import data_mounts, lay_out
from stepswitch.bench.grading_select import select_args, with_missing
from stepswitch.bench.grading_timeout import PLUGIN, PLUGIN_SOURCE
from stepswitch.bench.task import HIDDEN_FOLDER, Task
from stepswitch.bench.verdict import REPORT_CAP_BYTES, TestVerdict, parse_junit
from stepswitch.gates.pytest_config import choose_config, folder_reader, pinned_args, write_config
from stepswitch.util.proc import kill_group
from stepswitch.util.sandbox_backends import NoSandbox, Sandbox, SandboxPolicy

OUTPUT_CHARS = 4000  # the tail of the output kept in a verdict

# -- the run ------------------------------------------------------------------------------------


def grading_env(home: Path, tmp: Path, plugin_dir: Path) -> dict[str, str]:
    """Nothing of the caller's environment but PATH, with ssw's python first. No pytest plugin
    loads because it happens to be installed beside ssw (anyio's, in ssw's own environment, was
    half of every graded run's start-up): the verdict depends on the task, pytest and the
    timeout plugin only; a task that needs a plugin names it in its command (`-p module`)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)])
    return {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(tmp),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": str(plugin_dir),  # the per-test timeout plugin, nothing else
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def grading_policy(
    folder: Path, work: Path, env: Mapping[str, str], command: list[str]
) -> SandboxPolicy:
    """What a graded run sees: the grading folder and its scratch HOME and TMPDIR writable;
    ssw's interpreter, the runner's and the timeout plugin read-only; the user's home hidden,
    and of the rest of the machine only the system (ADR 0010's mount plan); no network. The
    report has no path in it: it leaves through a pipe. Inside the grading folder the hidden
    tests and the declared test data lay_out put back are read-only (mounted after the folder,
    being deeper), so the graded code cannot rewrite a test or its data before pytest reads it."""
    shown = [work / "plugin", Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    if command[0] not in ("python", "python3"):
        runner = shutil.which(command[0], path=env.get("PATH"))
        if runner is not None:  # e.g. a venv's bin/pytest: its prefix
            shown.append(Path(runner).resolve().parent.parent)
    if (folder / HIDDEN_FOLDER).is_dir():  # lay_out's: the task's hidden tests, nothing else
        shown.append(folder / HIDDEN_FOLDER)
    data = data_mounts(folder)
    return SandboxPolicy(
        writable=(folder, *data.pinned, work / "home", work / "tmp"),
        env=dict(env),
        read_only=(*shown, *data.read_only),
        hidden=(Path.home(),),
    )


def _argv(
    command: list[str],
    report: str,
    per_test_timeout_s: float,
    pinned: Sequence[str] = (),
    selected: Sequence[str] = (),
) -> list[str]:
    """The graded run's argv: `pinned` (pytest's configuration) straight after the word that
    names pytest, so that what the task's command says itself comes later and wins; `selected`
    (grading_select's plugin) last."""
    named = (i + 1 for i, w in enumerate(command[:3]) if Path(w).name.startswith("pytest"))
    at = next(named, len(command))
    words = [*command[:at], *pinned, *command[at:]]
    first = [sys.executable] if words[0] in ("python", "python3") else words[:1]
    return [
        *first,
        *words[1:],
        f"--junitxml={report}",
        "-p",
        PLUGIN,
        f"--ssw-test-timeout={per_test_timeout_s:g}",
        *selected,
    ]


def _tail(path: Path) -> str:
    try:
        with path.open("rb") as f:
            f.seek(max(0, path.stat().st_size - OUTPUT_CHARS))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


class _ReportPipe:
    """The pipe pytest writes its JUnit report into (`--junitxml=/dev/fd/N`), drained by a
    thread while the run goes on (a report larger than the pipe's buffer would block pytest).
    After the run, what is still buffered is read and nothing more: a process that escaped the
    kill (only possible without a sandbox) cannot keep the grader waiting."""

    POLL_S = 0.2

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.data = bytearray()
        self.overflow = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="ssw-report", daemon=True)

    def started(self) -> None:
        """The child holds its own copy of the write end now."""
        os.close(self.write_fd)
        self._thread.start()

    def _keep(self, chunk: bytes) -> None:
        if len(self.data) + len(chunk) > REPORT_CAP_BYTES:
            self.overflow = True
        else:
            self.data += chunk

    def _drain(self) -> None:
        after_stop = 0
        while after_stop <= REPORT_CAP_BYTES:
            stopping = self._stop.is_set()
            ready, _, _ = select.select([self.read_fd], [], [], 0 if stopping else self.POLL_S)
            if not ready:
                if stopping:
                    return
                continue
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                return  # every write end is closed
            self._keep(chunk)
            after_stop += len(chunk) if stopping else 0

    def close(self) -> bytes | None:
        """What came through; None when it passed REPORT_CAP_BYTES."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        os.close(self.read_fd)
        return None if self.overflow else bytes(self.data)

    def abandon(self) -> None:
        """The child never started."""
        os.close(self.write_fd)
        os.close(self.read_fd)


def _spawn(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    log: Path,
    timeout_s: float,
    pipe: _ReportPipe | None = None,
) -> tuple[int, bool]:
    """Run argv in its own session, output to `log`, up to `timeout_s`, passing it `pipe`'s
    write end; then its group is killed (and what the tests left running). Its exit status, and
    whether the limit ended it. Raises OSError when it cannot start (the pipe then abandoned)."""
    with log.open("wb") as out:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=() if pipe is None else (pipe.write_fd,),
            )
        except OSError:
            if pipe is not None:
                pipe.abandon()
            raise
        if pipe is not None:
            pipe.started()
        killed = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            killed = True
        kill_group(proc.pid)
        proc.wait()
    return proc.returncode, killed


def run_command(
    command: list[str], cwd: Path, *, timeout_s: float, scratch: Path, sandbox: Sandbox | None
) -> TestVerdict:
    """Another language's test command (`node --test test/`, `go test ./...`) run as run_pytest
    runs pytest, in the same sandbox, environment and whole-run limit, its verdict its exit
    status alone: no report (`report` False), so it never counts as a pytest pass."""
    confine = sandbox if sandbox is not None else NoSandbox()
    work = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
    for sub in ("home", "tmp", "plugin"):
        (work / sub).mkdir()
    env = grading_env(work / "home", work / "tmp", work / "plugin")
    policy = grading_policy(Path(cwd), work, env, command)
    log = work / "output.log"
    began = time.monotonic()
    try:
        returncode, killed = _spawn(
            confine.argv(command, policy, cwd), cwd, policy.env, log, timeout_s
        )
    except OSError as exc:
        return TestVerdict(
            None, False, output=f"cannot start {command[0]}: {exc}", sandbox=confine.name
        )
    why = f"the run passed its {timeout_s:g} s limit" if killed else None
    return TestVerdict(
        None if killed else returncode,
        False,
        timed_out=why,
        duration_s=time.monotonic() - began,
        output=_tail(log),
        sandbox=confine.name,
    )


def run_pytest(
    command: list[str],
    cwd: Path,
    *,
    per_test_timeout_s: float,
    timeout_s: float,
    scratch: Path,
    sandbox: Sandbox | None = None,
    config_from: Path | None = None,
    ids: Sequence[str] = (),
) -> TestVerdict:
    """Run a pytest command in `cwd` inside `sandbox` (None: unconfined, for the task's own
    start and reference); `scratch` (outside cwd) gets HOME, TMPDIR, the plugin and, once the
    run is over, a copy of the report (report.xml) and its output (output.log). With
    `config_from` (a task's start), pytest takes its configuration from that folder's file
    alone, copied beside the plugin (read-only inside), never from anything in `cwd`. With
    `ids`, only those tests run and count, and an id not collected is a failure
    (grading_select.py)."""
    confine = sandbox if sandbox is not None else NoSandbox()
    work = Path(tempfile.mkdtemp(prefix="run-", dir=scratch))
    for sub in ("home", "tmp", "plugin"):
        (work / sub).mkdir()
    (work / "plugin" / f"{PLUGIN}.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    pinned: list[str] = []
    if config_from is not None:
        chosen = choose_config(folder_reader(config_from))
        # A folder name that is no module name: the plugin folder is on PYTHONPATH.
        copy = write_config(chosen, work / "plugin" / "pytest-config")
        pinned = pinned_args(copy, Path(cwd), chosen)
    selected = select_args(work / "plugin", ids) if ids else []
    report, log = work / "report.xml", work / "output.log"
    env = grading_env(work / "home", work / "tmp", work / "plugin")
    policy = grading_policy(Path(cwd), work, env, command)
    pipe = _ReportPipe()
    report_fd = f"/dev/fd/{pipe.write_fd}"
    graded = _argv(command, report_fd, per_test_timeout_s, pinned, selected)
    argv = confine.argv(graded, policy, cwd)
    began = time.monotonic()
    try:
        returncode, killed = _spawn(argv, cwd, policy.env, log, timeout_s, pipe)
    except OSError as exc:
        return TestVerdict(
            None, False, output=f"cannot start {command[0]}: {exc}", sandbox=confine.name
        )
    received = pipe.close()
    duration = time.monotonic() - began
    output = _tail(log)
    if received:
        report.write_bytes(received)  # for whoever reads the scratch folder; never read back
    if killed:
        why = f"the run passed its {timeout_s:g} s limit"
        return TestVerdict(
            None, False, timed_out=why, duration_s=duration, output=output, sandbox=confine.name
        )
    if received is None:
        verdict = TestVerdict(
            returncode,
            True,
            tampered=f"the report passed {REPORT_CAP_BYTES} bytes",
            duration_s=duration,
            output=output,
        )
    else:
        verdict = parse_junit(received, returncode, duration, output)
        verdict = with_missing(verdict, received, ids) if ids else verdict
    if not verdict.report and "Timeout (" in output:  # faulthandler's exit: a test stuck in C
        why = f"a test ran past {per_test_timeout_s:g} s"
        verdict = TestVerdict(returncode, False, timed_out=why, duration_s=duration, output=output)
    return dataclasses.replace(verdict, sandbox=confine.name)


def run_task_pytest(
    task: Task,
    command: list[str],
    cwd: Path,
    scratch: Path,
    sandbox: Sandbox | None,
    config_from: Path | None = None,
    ids: Sequence[str] = (),
) -> TestVerdict:
    """`run_pytest` with the task's own limits (its tests.per_test_timeout_s and timeout_s)."""
    spec = task.spec.tests
    return run_pytest(
        command,
        cwd,
        per_test_timeout_s=spec.per_test_timeout_s,
        timeout_s=spec.timeout_s,
        scratch=scratch,
        sandbox=sandbox,
        config_from=config_from,
        ids=ids,
    )


def grade(
    task: Task,
    tree: Path,
    scratch: Path,
    sandbox: Sandbox | None = None,
    ids: Sequence[str] | None = None,
) -> TestVerdict:
    """The hidden tests' verdict on a run's tree (TreeGit.check_out gives the committed one),
    run inside `sandbox` (a bench passes the one its agent ran in; None: unconfined), with
    pytest's configuration from the task's start: nothing of the tree configures pytest. A task
    with graded ids is judged by those (`ids` chooses some of them: validate's start checks)."""
    folder = Path(tempfile.mkdtemp(prefix="grading-", dir=scratch)) / "repo"
    lay_out(task, tree, folder)
    chosen = task.graded_ids if ids is None else ids
    return run_task_pytest(
        task, task.command, folder, scratch, sandbox, config_from=task.repo, ids=chosen
    )


def grade_record(verdict: TestVerdict) -> GradeFile:
    """A task run's grade.json: the verdict as graded, and whether it passed."""
    data = dataclasses.asdict(verdict)
    data.update(failing=list(verdict.failing), passed=verdict.passed)
    data["duration_s"] = round(verdict.duration_s, 3)
    return GradeFile.model_validate(data)


def write_grade(record_dir: Path, verdict: TestVerdict) -> None:
    """grade.json in a task run's record folder, through its model (bench/files/)."""
    (record_dir / GRADE_FILE).write_text(json_text(grade_record(verdict)), encoding="utf-8")


__all__ = [
    "OUTPUT_CHARS",
    "TestVerdict",
    "grade",
    "grade_record",
    "grading_env",
    "grading_policy",
    "parse_junit",
    "run_command",
    "run_pytest",
    "write_grade",
]
