"""Every end keeps the work: `ssw run` as a real process, stopped by SIGINT or SIGTERM inside its
final commit, with git failing as it does on a full disk, with run.json unwritable, refused or
stopped in its pre-flight; then what `ssw runs` and `ssw runs clean` make of what it left.

The commit is made slow deterministically by a `git` first on the run's PATH (ssw runs git by
name, util/git.run_git): it passes every command to the real git, but the one that makes the
final commit (the `update-ref` that moves the branch to it: ssw writes the commit object itself,
ADR 0089) says so in a file and waits on a FIFO the test opens. A full disk is two things: for
git, that git prints what git 2.39 prints when its object store's file system is full and exits
128 (checked once on a 256 KiB tmpfs); for ssw's own records, run.json's staging file made a
link to /dev/full, so the kernel itself answers the write with ENOSPC."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from stepswitch.ledger import open_ledger
from stepswitch.records.money import format_usd
from tests.harness.cli import run_ssw_cli, ssw_env
from tests.harness.repo import commit_all, git, sample_repo
from tests.harness.task import (
    FIX_LINE,
    done,
    every_worker,
    explore,
    fix_the_bug,
    ledger_count,
    make_policy,
    run_command,
    tool,
    use_extra_models,
    whole_fix,
)

ENOSPC_GIT = "fatal: unable to write loose object file: No space left on device\n"
SAVING = "saving the run's work (a commit on ssw/"
UPDATE_REF = "ssw: commit the run's change"  # the -m of the update-ref that moves the branch


class HeldGit:
    """A `git` for the run's PATH that holds (and, with `fail()`, fails) the first command
    naming `target`; every other command is the real git's."""

    def __init__(self, folder: Path, target: str, hold: bool = True) -> None:
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True)
        self.ready = folder / "at-commit"
        self.go = folder / "go"
        self.failure = folder / "fail"
        os.mkfifo(self.go)
        real = shutil.which("git")
        assert real is not None
        wait = f"  read _ < {shlex.quote(str(self.go))}\n" if hold else ""
        script = (
            "#!/bin/sh\n"
            'for arg in "$@"; do\n'
            f'  [ "$arg" = {shlex.quote(target)} ] || continue\n'
            f"  [ -e {shlex.quote(str(self.ready))} ] && break\n"  # the first time only
            f"  : > {shlex.quote(str(self.ready))}\n"
            f"{wait}"
            f"  if [ -e {shlex.quote(str(self.failure))} ]; then\n"
            f"    cat {shlex.quote(str(self.failure))} >&2; exit 128\n"
            "  fi\n"
            "  break\n"
            "done\n"
            f'exec {shlex.quote(real)} "$@"\n'
        )
        path = self.bin / "git"
        path.write_text(script)
        path.chmod(0o755)

    def fail(self, text: str = ENOSPC_GIT) -> None:
        self.failure.write_text(text)

    def release(self) -> None:
        with self.go.open("w") as out:  # the shim has it open for reading: this cannot block
            out.write("go\n")

    def release_if_waiting(self) -> None:
        try:
            fd = os.open(self.go, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return  # nobody waits on it
        os.write(fd, b"go\n")
        os.close(fd)


@dataclass
class Run:
    proc: subprocess.Popen[str]
    repo: Path
    out: Path
    err: Path

    def wait_for(self, condition: Callable[[], bool], what: str, limit_s: float = 180) -> None:
        """Poll until `condition` holds; fail when the run ends first (the limit only stops a
        hung test, it asserts nothing about time)."""
        end = time.monotonic() + limit_s
        while not condition():
            if self.proc.poll() is not None:
                if condition():
                    return
                raise AssertionError(
                    f"the run ended (exit {self.proc.returncode}) before {what}:\n"
                    f"{self.out.read_text()}\n{self.err.read_text()}"
                )
            if time.monotonic() > end:
                raise AssertionError(f"{what}: not in {limit_s:g} s\n{self.err.read_text()}")
            time.sleep(0.05)

    def send(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def finish(self) -> int:
        return self.proc.wait(timeout=180)

    @property
    def folder(self) -> Path:
        [folder] = list((self.repo / ".ssw" / "runs").iterdir())
        return folder

    @property
    def run_id(self) -> str:
        return self.folder.name

    def record(self) -> dict:
        return json.loads((self.folder / "run.json").read_text())

    def stderr(self) -> str:
        return self.err.read_text()

    def stdout(self) -> str:
        return self.out.read_text()

    def edited(self) -> bool:
        steps = list((self.repo / ".ssw" / "runs").glob("*/steps.jsonl"))
        return bool(steps) and '"name":"edit"' in steps[0].read_text()


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """Start `ssw run` on a repository, with `shim` first on its PATH; every run it started
    is ended, and every shim let go, at the test's end."""
    started: list[tuple[Run, HeldGit | None]] = []

    def start(
        repo: Path,
        replies: list[dict],
        shim: HeldGit | None = None,
        policy: dict | None = None,
        **env: str,
    ) -> Run:
        work = tmp_path / f"run{len(started)}"
        work.mkdir()
        if shim is not None:
            env["PATH"] = f"{shim.bin}{os.pathsep}{os.environ['PATH']}"
        command = run_command(work, repo, replies, policy=policy)
        out, err = work / "stdout", work / "stderr"
        with out.open("w") as o, err.open("w") as e:
            proc = subprocess.Popen(
                command, stdout=o, stderr=e, stdin=subprocess.DEVNULL, text=True, env=ssw_env(**env)
            )
        run = Run(proc, repo, out, err)
        started.append((run, shim))
        return run

    yield start
    for run, shim in started:
        if shim is not None:
            shim.release_if_waiting()
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait(timeout=60)


def ssw(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_ssw_cli([*args, "--repo", str(repo)], env=ssw_env(), timeout=120)


def listed(repo: Path) -> dict[str, dict]:
    result = ssw(repo, "runs", "--json")
    assert result.returncode == 0, result.stderr
    return {row["id"]: row for row in json.loads(result.stdout)}


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def head(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", rev).strip()


FIXED = whole_fix()
# The edit, then a model call that takes 600 s: a signal then lands mid-run, the edit made.
EDIT_THEN_WAIT = [*explore(), fix_the_bug()[0], done("x") | {"delay_s": 600}]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return sample_repo(tmp_path / "repo", "mean_bug")


# --- a signal inside the final commit ---


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "target"),
    [(signal.SIGINT, UPDATE_REF), (signal.SIGTERM, UPDATE_REF)],
    ids=["ctrl-c-update-ref", "sigterm-update-ref"],
)
def test_a_signal_inside_the_final_commit_waits_for_it_and_the_edit_is_on_the_branch(
    tmp_path: Path, repo: Path, runs: Callable[..., Run], signum: int, target: str
):
    shim, run = _held_at_the_final_commit(tmp_path, repo, runs, target)
    run.send(signum)
    run.wait_for(lambda: SAVING in run.stderr(), "the line saying the work is being saved")
    shim.release()

    assert run.finish() == 130, run.stderr()  # the signal reaches ssw once the work is saved
    record = run.record()
    branch = f"ssw/{run.run_id}"
    assert (record["outcome"], record["commit"]) == ("done", head(repo, branch))
    assert FIX_LINE in git(repo, "show", f"{branch}:calc/ops.py")
    assert not (repo / record["worktree"]).exists()  # removed: its branch holds all of it
    assert "Traceback" not in run.stderr()
    row = listed(repo)[run.run_id]
    assert (row["outcome"], row["worktree"], row["branch"]) == ("done", False, branch)

    cleaned = ssw(repo, "runs", "clean", "--all")
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"kept branch {branch} has 1 commit(s) on no other branch" in cleaned.stdout
    assert FIX_LINE in git(repo, "show", f"{branch}:calc/ops.py")


@pytest.mark.slow
def test_a_second_ctrl_c_while_an_interrupted_run_commits_says_so_and_the_edit_is_kept(
    tmp_path: Path, repo: Path, runs: Callable[..., Run]
):
    shim = HeldGit(tmp_path / "git", UPDATE_REF)
    run = runs(repo, EDIT_THEN_WAIT, shim)
    run.wait_for(run.edited, "the edit")
    run.send(signal.SIGINT)
    run.wait_for(shim.ready.exists, "the commit of the interrupted run")
    run.send(signal.SIGINT)
    run.wait_for(lambda: SAVING in run.stderr(), "the line saying the work is being saved")
    shim.release()

    assert run.finish() == 130, run.stderr()
    record = run.record()
    branch = f"ssw/{run.run_id}"
    assert (record["outcome"], record["reason"]) == ("interrupted", "interrupted by Ctrl-C")
    assert record["commit"] == head(repo, branch)
    assert FIX_LINE in git(repo, "show", f"{branch}:calc/ops.py")
    assert not (repo / record["worktree"]).exists()
    row = listed(repo)[run.run_id]
    assert (row["outcome"], row["dollars"]) == ("interrupted", {"low": 0.0, "high": 0.0})

    cleaned = ssw(repo, "runs", "clean", "--all")
    assert cleaned.returncode == 0, cleaned.stderr
    assert branch in branches(repo)  # its one commit holds the edit: never deleted unforced
    assert FIX_LINE in git(repo, "show", f"{branch}:calc/ops.py")


# --- a full disk ---


@pytest.mark.slow
def test_git_failing_as_on_a_full_disk_keeps_the_worktree_records_error_and_exits_1(
    tmp_path: Path, repo: Path, runs: Callable[..., Run]
):
    shim = HeldGit(tmp_path / "git", UPDATE_REF, hold=False)
    shim.fail()
    run = runs(repo, FIXED, shim)

    assert run.finish() == 1, run.stderr()
    record, branch = run.record(), f"ssw/{run.run_id}"
    worktree = repo / ".ssw" / "worktrees" / run.run_id
    assert (record["outcome"], record["exit_code"], record["commit"]) == ("error", 1, None)
    assert record["reason"].startswith("done: the gates passed; then its work could not be ")
    assert "No space left on device" in record["reason"]
    assert record["reason"].endswith(f"it stays in .ssw/worktrees/{run.run_id}")
    assert str(tmp_path) not in record["reason"]  # no machine path in the record
    assert FIX_LINE in (worktree / "calc" / "ops.py").read_text()
    assert head(repo, branch) == head(repo, "main")
    assert f"ssw: the worktree {worktree} stays: it holds work on no commit of {branch}" in (
        run.stdout()
    )
    assert "Traceback" not in run.stderr()
    row = listed(repo)[run.run_id]
    assert (row["outcome"], row["worktree"]) == ("error", True)

    cleaned = ssw(repo, "runs", "clean", "--all")
    assert cleaned.returncode == 0, cleaned.stderr
    assert "has uncommitted changes (1 file: calc/ops.py)" in cleaned.stdout
    assert FIX_LINE in (worktree / "calc" / "ops.py").read_text()
    assert branch in branches(repo)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["write-tree", "update-index", "diff-tree"])
def test_git_failing_as_on_a_full_disk_during_the_gates_is_exit_1_with_no_machine_path(
    tmp_path: Path, repo: Path, runs: Callable[..., Run], target: str
):
    """The snapshot of the worktree the review and the gates read (git write-tree and
    update-index, which store a tree holding a name git may refuse, ADR 0074; git diff-tree, ADR
    0092) fails as on a full disk: that is not the user's input (exit 1, not 2), and the record
    names no machine path; the edit stays where the run left it."""
    (repo / "notes~1.txt").write_text("a name git stores only after a look\n")
    commit_all(repo, "notes")
    shim = HeldGit(tmp_path / "git", target, hold=False)
    shim.fail()
    run = runs(repo, FIXED, shim)

    assert run.finish() == 1, run.stderr()
    record = run.record()
    assert (record["outcome"], record["exit_code"]) == ("error", 1)
    assert "No space left on device" in record["reason"]
    assert str(tmp_path) not in record["reason"] and str(repo) not in record["reason"]
    assert "Traceback" not in run.stderr()
    assert "No space left on device" in run.stdout() + run.stderr()  # said, not only recorded
    worktree = repo / ".ssw" / "worktrees" / run.run_id
    kept = f"ssw/{run.run_id}:calc/ops.py"
    assert FIX_LINE in (
        (worktree / "calc" / "ops.py").read_text() if worktree.exists() else git(repo, "show", kept)
    )


def _held_at_the_final_commit(
    tmp_path: Path, repo: Path, runs: Callable[..., Run], target: str = UPDATE_REF
) -> tuple[HeldGit, Run]:
    """The bug fixed by a run whose git holds the command `target` of its final commit: the
    shim and the run, once the command waits."""
    shim = HeldGit(tmp_path / "git", target)
    run = runs(repo, FIXED, shim)
    run.wait_for(shim.ready.exists, "the final commit")
    return shim, run


def _held_with_a_full_record(
    tmp_path: Path, repo: Path, runs: Callable[..., Run]
) -> tuple[HeldGit, Run]:
    """A run held at its final commit, its record's disk full (`_fill_record`)."""
    shim, run = _held_at_the_final_commit(tmp_path, repo, runs)
    _fill_record(run)
    return shim, run


def _fill_record(run: Run) -> Path:
    """run.json's staging file becomes /dev/full: its next write fails with ENOSPC."""
    staged = run.folder / "run.json.tmp"
    staged.unlink(missing_ok=True)
    staged.symlink_to("/dev/full")
    return staged


@pytest.mark.slow
def test_a_run_json_that_cannot_be_written_is_one_line_and_the_work_is_on_the_branch(
    tmp_path: Path, repo: Path, runs: Callable[..., Run]
):
    shim, run = _held_with_a_full_record(tmp_path, repo, runs)
    shim.release()

    assert run.finish() == 1
    branch = f"ssw/{run.run_id}"
    commit = head(repo, branch)
    assert run.stderr().splitlines() == [
        f"ssw: cannot write {run.folder}/run.json: No space left on device; its work is "
        f"committed on branch {branch} at {commit[:12]}"
    ]
    assert FIX_LINE in git(repo, "show", f"{branch}:calc/ops.py")
    assert not (repo / ".ssw" / "worktrees" / run.run_id).exists()  # its branch holds it


@pytest.mark.slow
def test_a_full_disk_for_the_commit_and_the_record_keeps_the_worktree_and_clean_keeps_it(
    tmp_path: Path, repo: Path, runs: Callable[..., Run]
):
    shim, run = _held_with_a_full_record(tmp_path, repo, runs)
    shim.fail()
    shim.release()

    assert run.finish() == 1
    worktree = repo / ".ssw" / "worktrees" / run.run_id
    assert run.stderr().splitlines() == [
        f"ssw: cannot write {run.folder}/run.json: No space left on device; its work is not "
        f"committed: it stays in {worktree}"
    ]
    assert FIX_LINE in (worktree / "calc" / "ops.py").read_text()
    assert listed(repo)[run.run_id]["outcome"] == "abandoned"  # run.json still says running

    _fill_record(run)  # the disk is still full for `ssw runs clean`
    cleaned = ssw(repo, "runs", "clean", "--all")
    assert (cleaned.returncode, cleaned.stderr) == (0, "")
    assert "has uncommitted changes (1 file: calc/ops.py)" in cleaned.stdout
    assert "kept its 'running' mark: run.json cannot be written (No space left on device)" in (
        cleaned.stdout
    )
    assert FIX_LINE in (worktree / "calc" / "ops.py").read_text()


# --- the pre-flight ---


def _with_gate(repo: Path, table: str) -> Path:
    (repo / ".stepswitch.toml").write_text(table)
    git(repo, "add", ".stepswitch.toml")
    git(repo, "commit", "-q", "-m", "gates")
    return repo


@pytest.mark.slow
def test_a_run_refused_by_the_pre_flight_leaves_no_branch_worktree_or_run_folder(
    repo: Path, runs: Callable[..., Run]
):
    _with_gate(repo, '[gates.lint]\ncommand = "no-such-linter-for-ssw ."\n')
    run = runs(repo, FIXED)

    assert run.finish() == 2
    [line] = run.stderr().splitlines()
    assert line.startswith("ssw: gates: lint: command not found: no-such-linter-for-ssw")
    assert branches(repo) == ["main"]
    assert list((repo / ".ssw" / "worktrees").iterdir()) == []
    assert not (repo / ".ssw" / "runs").exists() or list((repo / ".ssw" / "runs").iterdir()) == []
    assert listed(repo) == {}


def _priced(monkeypatch: pytest.MonkeyPatch, folder: Path) -> dict:
    """A policy whose every worker costs dollars (the registry's copy is in this process's
    environment, which the runs started inherit)."""
    use_extra_models(monkeypatch, folder)
    return make_policy(workers=every_worker("scripted-priced"))


def _model_steps(run: Run) -> list[dict]:
    lines = (run.folder / "steps.jsonl").read_text().splitlines()
    return [step for step in map(json.loads, lines) if step["kind"] == "model_step"]


def _running(argv_tail: bytes) -> list[int]:
    """The processes on this machine whose command line ends with `argv_tail`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().endswith(argv_tail):
                found.append(int(proc.name))
        except OSError:
            continue  # it ended meanwhile
    return found


@pytest.mark.slow
def test_a_pre_flight_refusal_after_the_plans_call_ends_the_run_as_a_refusal_billed_once(
    tmp_path: Path, repo: Path, runs: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
):
    # A gate whose first word is the shell's own, so only running it finds it cannot run: the
    # plan's call (a list_dir the model asks for) has left by then (ADR 0088).
    (repo / "lint.sh").write_text("#!/bin/sh\nexit 0\n")  # not executable: exit 126
    git(repo, "add", "lint.sh")
    _with_gate(repo, '[gates.lint]\ncommand = "exec ./lint.sh"\n')
    run = runs(repo, [tool("list_dir", path="."), *FIXED], policy=_priced(monkeypatch, tmp_path))

    assert run.finish() == 2
    [line] = run.stderr().splitlines()  # the refusal's one line, as before any call
    assert line.startswith("ssw: gates: lint: the command cannot be executed (exit 126)")
    # The plan's step is recorded, its reply's tool never run, and no second call left.
    [plan] = _model_steps(run)
    assert (plan["step_type"], plan["tool_calls"]) == ("plan", [])
    # The record says the same, the worktree named from the repository (no machine path).
    said = line.removeprefix("ssw: ").replace(f"{repo.resolve()}/", "")
    assert str(repo.resolve()) in line and str(repo.resolve()) not in said
    assert plan["error"] == f"the run ended during this step: {said}"
    record = run.record()
    assert (record["outcome"], record["exit_code"], record["reason"]) == ("error", 2, said)
    # Its dollars, once: in the step, the run's totals, the ledger and the bill.
    assert plan["cost"]["low"] > 0
    assert record["totals"]["cost"] == plan["cost"]
    with open_ledger(repo / ".ssw" / "ledger.sqlite") as ledger:
        [row] = ledger.rows(run.run_id)
        assert row.status == "settled"
    assert f"bill: {format_usd(plan['cost']['low'], plan['cost']['high'])} over 1 steps" in (
        run.stdout()
    )
    # Left as any ended run: its branch at the base commit, no worktree, listed.
    assert head(repo, f"ssw/{run.run_id}") == head(repo, "main")
    assert list((repo / ".ssw" / "worktrees").iterdir()) == []
    assert listed(repo)[run.run_id]["outcome"] == "error"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "said"), [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")]
)
def test_a_signal_while_the_pre_flight_runs_beside_the_plan_ends_both_and_records_the_plan(
    tmp_path: Path,
    repo: Path,
    runs: Callable[..., Run],
    monkeypatch: pytest.MonkeyPatch,
    signum: int,
    said: str,
):
    # A gate that says it started, in the run's scratch HOME, and then does not finish; the
    # plan's reply comes at once and waits for the gate's verdict (ADR 0088).
    marker, sleeps = "ssw-preflight-started", f"{600 + signum}.5"
    _with_gate(
        repo,
        f"[gates.slow]\ncommand = 'touch \"$TMPDIR/{marker}\"; exec sleep {sleeps}'\n"
        "timeout_s = 900\n",
    )
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = runs(repo, FIXED, policy=_priced(monkeypatch, tmp_path), TMPDIR=str(scratch))
    run.wait_for(lambda: any(scratch.glob(f"ssw-home-*/tmp/{marker}")), "the pre-flight's gate")
    run.wait_for(lambda: ledger_count(repo / ".ssw" / "ledger.sqlite", "settled") == 1, "plan")
    run.send(signum)

    assert run.finish() == 130
    assert _running(f"sleep\0{sleeps}\0".encode()) == []  # the gate's command is killed
    record = run.record()
    assert (record["outcome"], record["reason"]) == ("interrupted", f"interrupted by {said}")
    [plan] = _model_steps(run)
    assert plan["step_type"] == "plan" and plan["cost"]["low"] > 0
    assert plan["error"] == f"the run ended during this step: interrupted by {said}"
    assert record["totals"]["cost"] == plan["cost"]
    assert record["baseline_gates"] == []  # no verdict came
    # Left as any interrupted run: its branch at the base commit, no worktree.
    assert head(repo, f"ssw/{run.run_id}") == head(repo, "main")
    assert list((repo / ".ssw" / "worktrees").iterdir()) == []
    assert listed(repo)[run.run_id]["outcome"] == "interrupted"


@pytest.mark.slow
def test_a_signal_while_the_worktree_is_made_takes_the_new_branch_back(
    tmp_path: Path, repo: Path, runs: Callable[..., Run]
):
    # `cat-file --batch` starts beside the new branch's update-ref (ADR 0092) and first answers
    # when the branch's files are written into the worktree: held, the run waits there.
    shim = HeldGit(tmp_path / "git", "--batch")
    run = runs(repo, FIXED, shim)
    run.wait_for(
        lambda: shim.ready.exists() and any(b.startswith("ssw/") for b in branches(repo)),
        "the branch made and its files waiting to be written",
    )
    run.send(signal.SIGINT)

    assert run.finish() == 130
    assert branches(repo) == ["main"]
    assert list((repo / ".ssw" / "worktrees").iterdir()) == []
    assert run.stdout().splitlines()[-1].endswith(": no branch or worktree was made")
    assert listed(repo) == {}


# --- the hold itself, for library callers ---


def test_a_stop_signal_the_caller_ignores_stays_ignored_through_a_run():
    from stepswitch.agent.workspace.stops import run_ending

    # A bench worker ignores SIGINT (its parent stops the bench): run_task must not undo that.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with run_ending("saving") as ending:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            signal.raise_signal(signal.SIGINT)
            ending.begin()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_signal_held_at_the_end_reaches_the_callers_handler_once_the_end_is_done(capfd):
    from stepswitch.agent.workspace.stops import run_ending

    seen: list[str] = []

    def handler(signum: int, frame: object) -> None:
        seen.append("handler")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with run_ending("saving the run's work") as ending:
            ending.begin()
            signal.raise_signal(signal.SIGTERM)
            seen.append("saved")
        assert seen == ["saved", "handler"]
        assert "ssw: SIGTERM: saving the run's work first; it stops when that is done" in (
            capfd.readouterr().err
        )
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_sigterm_with_no_handler_stops_the_run_then_ends_the_process_after_the_save():
    # A library caller that set no SIGTERM handler: the run records the stop and saves its
    # work, and only then does the process end by SIGTERM as it would have.
    script = (
        "import signal\n"
        "from stepswitch.agent.workspace.stops import run_ending\n"
        "from stepswitch.errors import Interrupted\n"
        "with run_ending('saving') as ending:\n"
        "    try:\n"
        "        signal.raise_signal(signal.SIGTERM)\n"
        "    except Interrupted as exc:\n"
        "        print('stopped by', exc.signal_name, flush=True)\n"
        "    print('saved', flush=True)\n"
        "print('not reached', flush=True)\n"
    )
    done_ = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=ssw_env()
    )
    assert (done_.returncode, done_.stdout) == (-signal.SIGTERM, "stopped by SIGTERM\nsaved\n")
