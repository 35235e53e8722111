"""`ssw run` on a repository whose commit holds a tree someone made to climb out of it: the
run's check-out refuses it in one line before the first model call, and writes nothing outside."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git
from tests.harness.task import explore, make_policy, write_policy, write_script


def _git_in(repo: Path, *args: str, input: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _climbing_commit(repo: Path, depth: int) -> str:
    """HEAD's tree plus a folder `..` holding `..` ... `depth` times, then evil.txt."""
    blob = _git_in(repo, "hash-object", "-w", "--stdin", input="written outside\n")
    tree = _git_in(repo, "mktree", input=f"100644 blob {blob}\tevil.txt\n")
    for _ in range(depth):
        tree = _git_in(repo, "mktree", input=f"040000 tree {tree}\t..\n")
    top = _git_in(repo, "mktree", input=git(repo, "ls-tree", "HEAD") + f"040000 tree {tree}\t..\n")
    return git(repo, "commit-tree", top, "-p", "HEAD", "-m", "a tree someone made").strip()


def test_ssw_run_refuses_a_commit_whose_tree_climbs_out_and_writes_nothing_outside(
    tmp_path: Path, bug_repo: Path
):
    commit = _climbing_commit(bug_repo, depth=3)  # the run's tree is .ssw/worktrees/ID/
    git(bug_repo, "update-ref", "refs/heads/main", commit)
    outside = bug_repo.parent / "evil.txt"
    assert str(outside.relative_to(tmp_path)) == "evil.txt"
    assert "../../../../evil.txt" in git(bug_repo, "ls-tree", "-r", "--name-only", "HEAD")
    policy = write_policy(tmp_path, make_policy())
    script = write_script(tmp_path, explore())
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}

    result = run_ssw_cli(
        ["run", bug_repo, "--policy", policy, "--script", script, "--task", "fix mean",
         "--allow-dirty"],
        env=env, timeout=60,
    )  # fmt: skip

    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("ssw: ") and len(result.stderr.splitlines()) == 1
    assert "holds the path '..', which git cannot hold" in result.stderr
    assert not outside.exists()
    assert not list((bug_repo / ".ssw" / "worktrees").glob("*/*"))  # no tree left behind


def test_ssw_gates_refuses_a_head_whose_tree_climbs_out_and_writes_nothing_outside(
    tmp_path: Path, bug_repo: Path
):
    # HEAD's `..`/`..`/evil.txt from the gates' start copy (TMPDIR/ssw-start-*/start) is TMPDIR.
    git(bug_repo, "update-ref", "refs/heads/main", _climbing_commit(bug_repo, depth=1))
    (bug_repo / "calc" / "__init__.py").write_text("raise ImportError('the change breaks it')\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}

    result = run_ssw_cli(["gates", bug_repo], env={**env, "TMPDIR": str(scratch)}, timeout=60)

    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "holds the path '..'" in result.stderr
    assert not (scratch / "evil.txt").exists() and not list(tmp_path.rglob("evil.txt"))
