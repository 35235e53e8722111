"""Grading: a fresh folder outside the agent's worktree, the hidden tests copied in, one pytest run.

`grading_layout.lay_out` copies a run's tree (TreeGit.check_out gives the committed one), puts
back the start's test files and pytest configuration, removes what could stand in for the test
runner, and copies the hidden tests to `.ssw_hidden/`. `run_pytest` runs a command there inside
the sandbox the bench chose (util/sandbox.py: the grading folder and a scratch HOME writable, the
interpreters and the timeout plugin read-only, nothing else of the user's, no network), with a
scrubbed environment, a per-test limit (a small plugin, no dependency) and a limit on the whole
run (the process group is killed). The verdict is pytest's exit status and its JUnit XML
report, which pytest writes into a pipe: no path of the report exists where the graded code
runs, and what comes out of the pipe must be one JUnit document that agrees with the exit
status, or the run is graded as tampered with (docs/decisions/0015-grading.md).
"""

from __future__ import annotations

import dataclasses
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stepswitch.bench.files import GRADE_FILE, GradeFile, json_text
from stepswitch.bench.grading_layout import data_mounts, lay_out
from stepswitch.bench.task import HIDDEN_FOLDER, Task
from stepswitch.gates.pytest_config import choose_config, folder_reader, pinned_args, write_config
from stepswitch.util.proc import kill_group
from stepswitch.util.sandbox import NoSandbox, Sandbox, SandboxPolicy

PLUGIN = "ssw_grading_timeout"
TIMEOUT_MARK = "ssw: test timed out after"
WALL_FACTOR = 4  # a test's wall-clock backstop, as a multiple of its CPU-time limit
OUTPUT_CHARS = 4000  # the tail of the output kept in a verdict
REPORT_CAP_BYTES = 20_000_000

PLUGIN_SOURCE = f'''"""Per-test time limit for graded runs (written by stepswitch): CPU time, so
a loaded machine does not fail a test that would pass idle, with a wall-clock backstop for a
test that waits (sleeps, blocks) instead of computing."""
import faulthandler
import gc
import signal

import pytest

# Loaded before the task's conftest files and tests: what exists now (pytest, its plugins, the
# standard library) lives as long as the run. Out of the collector's sight, so the collections
# the run makes walk only what the task's code and tests make (ADR 0019 addendum).
gc.freeze()

WALL_FACTOR = {WALL_FACTOR}  # the wall backstop: this many times the CPU limit
GRACE_S = 5.0  # past the backstop plus this, a test stuck outside Python ends the whole run


def pytest_addoption(parser):
    parser.addoption("--ssw-test-timeout", type=float, default=0.0)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    limit = item.config.getoption("--ssw-test-timeout")
    if limit <= 0:
        return (yield)
    wall = limit * WALL_FACTOR

    def cpu_spent(signum, frame):
        pytest.fail(f"{TIMEOUT_MARK} {{limit:g}} s of CPU time", pytrace=False)

    def wall_passed(signum, frame):
        pytest.fail(f"{TIMEOUT_MARK} {{wall:g}} s of wall time", pytrace=False)

    previous = signal.signal(signal.SIGPROF, cpu_spent), signal.signal(signal.SIGALRM, wall_passed)
    signal.setitimer(signal.ITIMER_PROF, limit)
    signal.setitimer(signal.ITIMER_REAL, wall)
    faulthandler.dump_traceback_later(wall + GRACE_S, exit=True)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])
'''


@dataclass(frozen=True)
class TestVerdict:
    """What pytest said about one run: its exit status and its JUnit report's counts."""

    __test__ = False  # not a pytest test class

    exit_status: int | None  # None: it could not start, or was killed at the whole-run limit
    report: bool  # a JUnit report was written and read
    tests: int = 0
    failures: int = 0
    errors: int = 0
    skipped: int = 0
    timed_out: str | None = None  # why, when a test or the run passed its limit
    failing: tuple[str, ...] = ()  # the first failed or errored test ids
    duration_s: float = 0.0
    output: str = ""  # the tail of standard output and error
    tampered: str | None = None  # why what came out of the report's pipe is not pytest's report
    sandbox: str = "none"  # what confined the run (util/sandbox.py)

    @property
    def passed_tests(self) -> int:
        return self.tests - self.failures - self.errors - self.skipped

    @property
    def passed(self) -> bool:
        """Every hidden test ran and passed: none failed, errored or skipped, none timed out,
        and the report is pytest's own."""
        clean = self.failures == self.errors == self.skipped == 0 and not self.timed_out
        honest = self.tampered is None
        return self.exit_status == 0 and self.report and self.tests > 0 and clean and honest

    @property
    def failed(self) -> bool:
        """The runner ran and reported a failing or erroring test (a collection error counts),
        or the tree's code tampered with the report."""
        bad = self.failures + self.errors > 0 or self.tampered is not None
        return self.report and bad and not self.timed_out

    def summary(self) -> str:
        if self.timed_out:
            return f"timed out: {self.timed_out}"
        if self.tampered:
            return f"report tampered with: {self.tampered}"
        if not self.report:
            status = "not started" if self.exit_status is None else f"exit {self.exit_status}"
            return f"no JUnit report ({status})"
        parts = [
            f"{n} {word}"
            for n, word in (
                (self.failures, "failed"),
                (self.errors, "error" if self.errors == 1 else "errors"),
                (self.passed_tests, "passed"),
                (self.skipped, "skipped"),
            )
            if n
        ]
        return ", ".join(parts) or "no tests"

    @property
    def sandbox_refused(self) -> str | None:
        """The sandbox's own complaint (its first line) when it did not start the command."""
        first = next((line.strip() for line in self.output.splitlines() if line.strip()), "")
        refused = not self.report and self.exit_status not in (None, 0)
        return first if refused and first.startswith(SANDBOX_VOICES) else None

    def tree_fault(self) -> str | None:
        """Why there is no verdict when the graded tree is to blame, or None: there is a report,
        or ssw is to blame (the command or the sandbox did not start). The rule (ADR 0015): the
        limits are the task's, which validate ran its reference within, and pytest started with
        ssw's options in a sandbox that came up always reports unless something in its process,
        the graded code, ends it first."""
        if self.report:
            return None
        if self.timed_out:
            return f"timed out: {self.timed_out}"
        if self.exit_status is None or self.sandbox_refused is not None:
            return None
        status = self.exit_status
        ended = f"killed by {_signal_name(-status)}" if status < 0 else f"exit {status}"
        return f"the hidden tests gave no report: the graded code ended pytest first ({ended})"


# What the sandbox's tools (util/sandbox.py; `ssw-sandbox` is unshare's script) print first when
# they cannot start the command: before it runs, so not something the graded code printed.
SANDBOX_VOICES = (
    "bwrap:",
    "unshare:",
    "setpriv:",
    "mount:",
    "umount:",
    "pivot_root:",
    "ssw-sandbox:",
)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


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
    command: list[str], report: str, per_test_timeout_s: float, pinned: Sequence[str] = ()
) -> list[str]:
    """The graded run's argv: `pinned` (pytest's configuration) straight after the word that
    names pytest, so that what the task's command says itself comes later and wins."""
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


def run_pytest(
    command: list[str],
    cwd: Path,
    *,
    per_test_timeout_s: float,
    timeout_s: float,
    scratch: Path,
    sandbox: Sandbox | None = None,
    config_from: Path | None = None,
) -> TestVerdict:
    """Run a pytest command in `cwd` inside `sandbox` (None: unconfined, for the task's own
    start and reference); `scratch` (outside cwd) gets HOME, TMPDIR, the plugin and, once the
    run is over, a copy of the report (report.xml) and its output (output.log). With
    `config_from` (a task's start), pytest takes its configuration from that folder's file
    alone, copied beside the plugin (read-only inside), never from anything in `cwd`."""
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
    report, log = work / "report.xml", work / "output.log"
    env = grading_env(work / "home", work / "tmp", work / "plugin")
    policy = grading_policy(Path(cwd), work, env, command)
    pipe = _ReportPipe()
    report_fd = f"/dev/fd/{pipe.write_fd}"
    argv = confine.argv(_argv(command, report_fd, per_test_timeout_s, pinned), policy, cwd)
    began = time.monotonic()
    with log.open("wb") as out:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=policy.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=(pipe.write_fd,),
            )
        except OSError as exc:
            pipe.abandon()
            return TestVerdict(
                None, False, output=f"cannot start {command[0]}: {exc}", sandbox=confine.name
            )
        pipe.started()
        killed = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            killed = True
        kill_group(proc.pid)  # also what the tests left running
        proc.wait()
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
            proc.returncode,
            True,
            tampered=f"the report passed {REPORT_CAP_BYTES} bytes",
            duration_s=duration,
            output=output,
        )
    else:
        verdict = parse_junit(received, proc.returncode, duration, output)
    if not verdict.report and "Timeout (" in output:  # faulthandler's exit: a test stuck in C
        why = f"a test ran past {per_test_timeout_s:g} s"
        verdict = TestVerdict(
            proc.returncode, False, timed_out=why, duration_s=duration, output=output
        )
    return dataclasses.replace(verdict, sandbox=confine.name)


def parse_junit(data: bytes, exit_status: int, duration_s: float, output: str) -> TestVerdict:
    """The counts of pytest's JUnit XML report. Nothing written is `report=False` (pytest did
    not get that far). Anything else must be what pytest writes, one `<testsuites>` document
    with one `<testsuite>`, agreeing with the exit status; if not, the tree's code wrote into the
    report (or stopped pytest from writing it whole) and the verdict is `tampered`."""

    def tampered(why: str) -> TestVerdict:
        return TestVerdict(exit_status, True, tampered=why, duration_s=duration_s, output=output)

    if not data.strip():
        return TestVerdict(exit_status, False, duration_s=duration_s, output=output)
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return tampered(f"not one XML document ({exc})")
    suites = list(root.iter("testsuite"))
    if root.tag != "testsuites" or len(suites) != 1 or list(root) != suites:
        return tampered("not the shape pytest writes (one <testsuite> in <testsuites>)")
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    try:
        for key in counts:
            counts[key] = int(suites[0].get(key, "0") or 0)
    except ValueError:
        return tampered("a count that is not a number")
    if exit_status == 0 and counts["failures"] + counts["errors"] > 0:
        return tampered("pytest exited 0 but the report lists failures")
    failing: list[str] = []
    timed_out = None
    for case in root.iter("testcase"):
        for bad in (*case.findall("failure"), *case.findall("error")):
            name = f"{case.get('classname', '')}::{case.get('name', '')}".strip(":")
            failing.append(name)
            message = bad.get("message", "")
            if TIMEOUT_MARK in message:
                timed_out = f"{name}: {message.removeprefix('Failed: ')}"
    return TestVerdict(
        exit_status,
        True,
        tests=counts["tests"],
        failures=counts["failures"],
        errors=counts["errors"],
        skipped=counts["skipped"],
        timed_out=timed_out,
        failing=tuple(dict.fromkeys(failing))[:10],
        duration_s=duration_s,
        output=output,
    )


def grade(task: Task, tree: Path, scratch: Path, sandbox: Sandbox | None = None) -> TestVerdict:
    """The hidden tests' verdict on a run's tree (TreeGit.check_out gives the committed one),
    run inside `sandbox` (a bench passes the one its agent ran in; None: unconfined), with
    pytest's configuration from the task's start: nothing of the tree configures pytest."""
    folder = Path(tempfile.mkdtemp(prefix="grading-", dir=scratch)) / "repo"
    lay_out(task, tree, folder)
    spec = task.spec.tests
    return run_pytest(
        task.command,
        folder,
        per_test_timeout_s=spec.per_test_timeout_s,
        timeout_s=spec.timeout_s,
        scratch=scratch,
        sandbox=sandbox,
        config_from=task.repo,
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
