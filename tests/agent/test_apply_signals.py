"""`ssw runs apply` stopped while git merges (issue 45): git runs in its own session, so a
Ctrl-C or SIGTERM to ssw left the merge going on to land with no line said. Now the signal is
held and said at once, the merge finishes, its lines are printed, then ssw stops (130)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.cli import wait_for
from tests.harness.repo import git
from tests.harness.task import FIX_LINE

from .apply_runs import (
    finished,
    head,
    repo,
    run_id,
)
from .test_every_end import HeldGit

__all__ = ["finished", "repo", "run_id"]  # fixtures


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_during_the_merge_waits_for_it_and_says_what_was_done(
    repo: Path, run_id: str, tmp_path: Path, signum: int
):
    shim = HeldGit(tmp_path / "git", "merge")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env = {**env, "PATH": f"{shim.bin}{os.pathsep}{env['PATH']}", "PYTHONDONTWRITEBYTECODE": "1"}
    before = head(repo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "stepswitch", "runs", "apply", run_id, "--repo", str(repo)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(shim.ready.exists, "git merge to start")
        proc.send_signal(signum)
        shim.release()
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    label = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
    assert f"ssw: {label}: applying run {run_id} first; it stops when that is done" in err
    assert "merged" in out, out  # the lines that say what was done came out
    assert head(repo) != before  # the merge landed, and was said
    assert FIX_LINE in (repo / "calc" / "ops.py").read_text()
    assert git(repo, "status", "--porcelain") == ""
    expected = 130 if signum == signal.SIGINT else -signal.SIGTERM
    assert proc.returncode == expected, err
