"""What the agent runs cannot reach secrets or the user's files: a real `ssw run` process with
canary values in provider keys and secret-looking variables, whose `run` tool tries every way out
we know. No canary may reach a prompt, a record, the ledger, a gate log or a commit, and no file
outside the worktree may change."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from stepswitch.records.folder import load_run
from tests.agent.conftest import NEEDS_A_SANDBOX
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git
from tests.harness.task import (
    approve_and_summarize,
    explore_running,
    fix_the_bug,
    run_files,
)

CANARIES = {
    "OPENAI_API_KEY": "canary-openai-5d1f",
    "ANTHROPIC_API_KEY": "canary-anthropic-77aa",
    "DATABASE_URL": "postgres://app:canary-dbpass-91c2@db.internal/app",
    "GITHUB_PAT": "canary-pat-c0ffee",
    "MY_SERVICE_TOKEN": "canary-token-4b4b",
}
HOME_SECRET = "canary-home-file-e3e3"
CHECKOUT_SECRET = "canary-checkout-file-a9a9"


def _run_with_canaries(tmp_path: Path, bug_repo: Path, sandbox: str) -> tuple[str, Path, Path]:
    """A full scripted run whose `run` step tries every way out; (all it left, home, folder)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.txt").write_text(HOME_SECRET)
    (bug_repo / ".gitignore").write_text("private.txt\n")
    git(bug_repo, "add", ".gitignore")
    git(bug_repo, "commit", "-q", "-m", "ignore private.txt")
    (bug_repo / "private.txt").write_text(CHECKOUT_SECRET)  # ignored: the checkout stays clean
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # The file reads come first: the run tool keeps the head and tail of long output, and the
    # /proc dump is long. The marker is built at run time, so the command text never holds it.
    attempts = " ; ".join(
        [
            f"cat {home}/secret.txt",
            "cat ../../../private.txt",
            "echo escaped > ../../../escaped.txt",
            f"echo escaped > {home}/escaped.txt",
            f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'"
            ' && echo "CONN$((1))ECTED"',
            "env",
            "cat /proc/[0-9]*/environ | tr '\\0' '\\n'",
        ]
    )
    replies = [
        *explore_running(attempts, "looked around", notes="notes"),
        *fix_the_bug(),
        *approve_and_summarize(),
    ]
    before = {p: p.read_bytes() for p in [home / "secret.txt", bug_repo / "private.txt"]}
    env = {**os.environ, **CANARIES, "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"}
    args = ["run", bug_repo, *run_files(tmp_path, replies), "--task", "fix mean"]
    args += ["--sandbox", sandbox]
    # A real process: what /proc/PID/environ shows is what the test reads (tests/harness/cli.py).
    done_run = run_ssw_cli(args, env=env, timeout=300, fresh=True)
    listener.close()

    assert done_run.returncode == 0, done_run.stdout[-3000:]
    [folder] = list((bug_repo / ".ssw" / "runs").iterdir())
    run = load_run(folder)
    assert run.run.outcome == "done"
    [shown] = [c.output for s in run.model_steps for c in s.tool_calls if c.name == "run"]
    everything = [done_run.stdout, done_run.stderr, shown]
    everything += [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()]
    everything.append(git(bug_repo, "log", "-p", "--all"))
    everything.append((bug_repo / ".ssw" / "ledger.sqlite").read_bytes().decode(errors="replace"))
    assert {p: p.read_bytes() for p in before} == before
    return "\n".join(everything), home, folder


ALL_CANARIES = [*CANARIES.values(), HOME_SECRET, CHECKOUT_SECRET, "canary-dbpass"]


@pytest.mark.slow
@NEEDS_A_SANDBOX
def test_no_canary_leaves_the_sandbox_and_nothing_outside_the_worktree_changes(
    tmp_path: Path, bug_repo: Path
):
    left, home, _ = _run_with_canaries(tmp_path, bug_repo, "auto")

    assert "Read-only file system" in left and "CONN1ECTED" not in left  # it did try
    assert [c for c in ALL_CANARIES if c in left] == []
    assert not (bug_repo / "escaped.txt").exists() and not (home / "escaped.txt").exists()


@pytest.mark.slow
def test_without_a_sandbox_the_same_probes_reach_the_users_files(tmp_path: Path, bug_repo: Path):
    # The control: the probes above are real. Keys stay out even here (ssw's start took them out
    # of its own environment and the commands get an allow-listed one); the files do not.
    left, home, _ = _run_with_canaries(tmp_path, bug_repo, "none")

    assert HOME_SECRET in left and CHECKOUT_SECRET in left and "CONN1ECTED" in left
    assert [c for c in CANARIES.values() if c in left] == []
    assert "sandbox: none" in left  # and the run said so at its start
    (bug_repo / "escaped.txt").unlink()
    (home / "escaped.txt").unlink()
