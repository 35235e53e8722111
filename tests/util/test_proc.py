"""The one process-group runner: a command that leaves a child holding the pipe still returns,
a timeout kills the whole group, and nothing it started outlives the call."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from stepswitch.util.proc import ProcResult, kill_live_groups, run_in_group


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _gone(pid: int) -> bool:
    """SIGKILL is delivered asynchronously: wait (bounded) for the process to be gone."""
    end = time.monotonic() + 30
    while _alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def _with_a_background_child(tmp_path: Path, then: str, timeout_s: float) -> tuple[ProcResult, int]:
    """`bash -c "sleep 300 & ...; THEN"` run in its group: the result, and the sleep's pid."""
    pid_file = tmp_path / "pid"
    done = run_in_group(
        ["bash", "-c", f"sleep 300 & echo $! > {pid_file}; {then}"],
        cwd=tmp_path,
        env=dict(os.environ),
        timeout_s=timeout_s,
        output_cap=1000,
    )
    return done, int(pid_file.read_text())


def test_a_background_child_holding_the_pipe_does_not_hang_the_call(tmp_path: Path) -> None:
    done, child = _with_a_background_child(tmp_path, "echo started", timeout_s=60)
    assert done.exit_code == 0 and "started" in done.output
    assert _gone(child)  # killed with its group when the shell exited


def test_a_timeout_kills_the_whole_group_and_says_so(tmp_path: Path) -> None:
    done, child = _with_a_background_child(tmp_path, "echo waiting; wait", timeout_s=0.5)
    assert done.timed_out and done.exit_code is None
    assert "waiting" in done.output
    assert _gone(child)


def test_long_output_keeps_its_head_and_tail(tmp_path: Path) -> None:
    code = "print('first'); print('x' * 100000); print('last')"
    done = run_in_group(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=dict(os.environ),
        timeout_s=60,
        output_cap=200,
    )
    assert done.output.startswith("first") and done.output.rstrip().endswith("last")
    assert "characters cut from the middle" in done.output


def test_a_command_that_cannot_start_is_a_result_not_an_exception(tmp_path: Path) -> None:
    done = run_in_group(["/nonexistent/tool"], cwd=tmp_path, env={}, timeout_s=5, output_cap=100)
    assert done.exit_code is None and done.start_error and "cannot start" in done.start_error


def test_no_group_is_left_live_after_calls_return(tmp_path: Path) -> None:
    run_in_group(["true"], cwd=tmp_path, env=dict(os.environ), timeout_s=5, output_cap=100)
    assert kill_live_groups() == 0


# A process that runs a command through run_in_group, as ssw's run tool does, and is killed with
# SIGKILL while the command runs: nothing of ssw's own code can act then.
_KILLED_HOLDER = """
import sys, threading
from pathlib import Path
from stepswitch.util import reaper
from stepswitch.util.proc import run_in_group
mark = Path(sys.argv[1])
told = reaper.started
def started(pgid):  # the group is the reaper's to kill from here on: the test may kill ssw
    told(pgid)
    Path(f"{mark}.told").write_text(str(pgid))
reaper.started = started
command = ["sh", "-c", f"sleep 600 & echo $! > {mark}.bg; echo $$ > {mark}; wait"]
threading.Thread(
    target=run_in_group,
    args=(command,),
    kwargs=dict(cwd=mark.parent, env={"PATH": "/usr/bin:/bin"}, timeout_s=600, output_cap=100),
    daemon=True,
).start()
threading.Event().wait()
"""


def test_a_command_and_its_children_die_when_ssw_is_killed_with_sigkill(tmp_path: Path) -> None:
    """No sandbox ties a command to ssw's life with --sandbox none: the reaper does. Its own
    child (`sleep 600 &`) goes too, since the whole process group is killed."""
    import signal
    import subprocess

    mark = tmp_path / "started"
    holder = subprocess.Popen([sys.executable, "-c", _KILLED_HOLDER, str(mark)])
    try:
        end = time.monotonic() + 60
        told = Path(f"{mark}.told")
        while not (
            told.exists()
            and Path(f"{mark}.bg").exists()
            and mark.exists()
            and mark.read_text().strip()
        ):
            assert holder.poll() is None and time.monotonic() < end, "the command never started"
            time.sleep(0.01)
        shell, child = int(mark.read_text()), int(Path(f"{mark}.bg").read_text())
        assert _alive(shell) and _alive(child)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
        assert _gone(shell) and _gone(child)
    finally:
        if holder.poll() is None:
            holder.kill()
