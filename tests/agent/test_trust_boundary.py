"""ssw's own host-side git cannot be configured by the tree the agent writes: a real `ssw run`
process, on each sandbox backend, whose scripted hostile model plants a git folder with an
fsmonitor command, hooks and a filter in its worktree, points the worktree's `.git` at it, and
reaches for the repository's own git folder. Nothing of it may run on the host, the run's outcome
must be true, and the user's branch must hold the commit the run reports. The controls show each
probe is real: the same planted tree does run its payload under a git that trusts it."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.records.folder import load_run
from stepswitch.util.sandbox import choose_sandbox
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git
from tests.harness.task import (
    approve_and_summarize,
    explore_running,
    fix_the_bug,
    run_files,
)

BACKENDS = ("bwrap", "unshare")


def _backend(name: str) -> None:
    try:
        choose_sandbox(name)
    except UsageError as exc:
        pytest.skip(str(exc))


def plant_hostile_git(marker: Path) -> str:
    """Shell text, run in a worktree, that plants a git folder whose every way of running a
    command appends a line to `marker` (a host path the sandbox cannot write)."""
    payload = f"echo pwned >> {shlex.quote(str(marker))}"
    hook = f"#!/bin/sh\n{payload}\n"
    steps = [
        "git init -q --bare .planted",
        f"git --git-dir=.planted config core.fsmonitor {shlex.quote(payload + '; true')}",
        "git --git-dir=.planted config core.fsmonitorHookVersion 1",
        f"git --git-dir=.planted config filter.evil.clean {shlex.quote(payload + '; cat')}",
        f"git --git-dir=.planted config diff.evil.textconv {shlex.quote(payload + '; cat')}",
        "git --git-dir=.planted config core.bare false",
        "printf '* filter=evil diff=evil\\n' > .gitattributes",
    ]
    for name in ("post-index-change", "post-commit", "pre-commit", "reference-transaction"):
        steps.append(f"printf %s {shlex.quote(hook)} > .planted/hooks/{name}")
        steps.append(f"chmod +x .planted/hooks/{name}")
    steps.append("printf 'gitdir: .planted\\n' > .git")
    return " && ".join(steps)


def _hostile_run(
    tmp_path: Path, repo: Path, sandbox: str, marker: Path, message: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    reach = " ; ".join(
        [
            f"echo x >> {repo}/.git/config",
            f"cat {repo}/.git/logs/HEAD",
            f"ls {repo}/.git/worktrees",
            "git status --short",
        ]
    )
    replies = [
        *explore_running(f"{plant_hostile_git(marker)} ; {reach}", "looked around", notes="notes"),
        *fix_the_bug(),
        *approve_and_summarize(message),
    ]
    args = ["run", repo, *run_files(tmp_path, replies), "--task", "fix mean"]
    args += ["--sandbox", sandbox]
    finished = run_ssw_cli(args, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=300)
    [folder] = list((repo / ".ssw" / "runs").iterdir())
    return finished, folder


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", BACKENDS)
def test_a_git_folder_planted_in_the_worktree_runs_nothing_on_the_host(
    tmp_path: Path, bug_repo: Path, sandbox: str
) -> None:
    _backend(sandbox)
    marker = tmp_path / "host-marker"
    config_before = (bug_repo / ".git" / "config").read_bytes()
    message = "Fix mean\n\nDivide by the count.\x1b]0;owned\x07\x1b[2J"

    finished, folder = _hostile_run(tmp_path, bug_repo, sandbox, marker, message)

    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-2000:]
    assert not marker.exists(), marker.read_text()
    run = load_run(folder).run
    assert run.outcome == "done"
    # The user's branch holds the commit the run reports, with the fix in it.
    assert git(bug_repo, "rev-parse", run.branch).strip() == run.commit
    assert "return sum(values) / len(values)" in git(bug_repo, "show", f"{run.branch}:calc/ops.py")
    # Nothing of the repository's git folder was reachable from the sandbox.
    assert (bug_repo / ".git" / "config").read_bytes() == config_before
    [shown] = [
        c.output for s in load_run(folder).model_steps for c in s.tool_calls if c.name == "run"
    ]
    assert "user@localhost" not in shown  # the user's identity in the reflogs stays hidden
    assert "No such file or directory" in shown or "Read-only" in shown
    # What the agent wrote is kept as data (a `.git` no tree can hold aside); the commit
    # message's control characters are escaped.
    assert "gitdir" not in git(bug_repo, "ls-tree", "-r", "--name-only", run.branch)
    assert "fsmonitor" in git(bug_repo, "show", f"{run.branch}:.planted/config")
    body = git(bug_repo, "log", "-1", "--format=%B", run.branch)
    assert "\x1b" not in body and "\x07" not in body and "\\x1b]0;owned" in body


@pytest.mark.slow
def test_control_the_planted_folder_runs_its_payload_under_a_git_that_trusts_the_tree(
    tmp_path: Path,
) -> None:
    # The probe is real: in a tree where the same text ran, plain git (discovering the `.git`
    # file as ssw's host-side git did before) runs the fsmonitor and the hooks on the host.
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("a\n")
    marker = tmp_path / "host-marker"
    subprocess.run(["sh", "-c", plant_hostile_git(marker)], cwd=tree, check=True)

    env = {**os.environ, "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@l"}
    env |= {"GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@l"}
    subprocess.run(["git", "add", "-A"], cwd=tree, env=env, capture_output=True, check=False)
    subprocess.run(
        ["git", "commit", "-qm", "x", "--no-verify"], cwd=tree, env=env, capture_output=True
    )

    assert marker.exists() and "pwned" in marker.read_text()


@pytest.mark.slow
def test_ssw_runs_clean_reads_nothing_from_a_planted_git_file(tmp_path: Path, bug_repo: Path):
    # A worktree left behind (kill -9) with a planted `.git`: `ssw runs clean` compares it with
    # its branch through the repository's own git folder, and runs nothing the tree names.
    from stepswitch.agent.workspace.runs import worktree_changes
    from stepswitch.agent.workspace.worktree import create_worktree

    marker = tmp_path / "host-marker"
    worktree = create_worktree(bug_repo, "20261201-000000-planted")
    subprocess.run(["sh", "-c", plant_hostile_git(marker)], cwd=worktree.path, check=True)

    changed = worktree_changes(bug_repo, "20261201-000000-planted")

    assert not marker.exists()
    assert ".gitattributes" in changed and ".planted/config" in changed


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", BACKENDS)
def test_a_bench_contestant_cannot_configure_the_git_that_grades_it(
    tmp_path: Path, sandbox: str
) -> None:
    # The task copy holds no git folder: `git init` and `git config core.fsmonitor` there make
    # a repository of the contestant's own, which nothing on the host reads; grading reads the
    # change from the copy's git folder beside it.
    from stepswitch.bench.executor import inline_executor
    from stepswitch.bench.runner import BenchSpec, run_bench
    from stepswitch.bench.task import load_suite
    from tests.bench import write_task
    from tests.bench.fakes import FakeContestant

    _backend(sandbox)
    marker = tmp_path / "host-marker"
    folder = write_task(tmp_path, "t1")
    hidden_before = (folder / "tests" / "test_hidden.py").read_bytes()
    attack = " ; ".join(
        [
            "git init -q . 2>&1",
            plant_hostile_git(marker)
            .replace(".planted", ".git")
            .replace("printf 'gitdir: .git\\n' > .git", "true"),
            "git config core.fsmonitor 'echo pwned >> " + str(marker) + "; true'",
            "ls -a",
        ]
    )
    attacker = FakeContestant("attacker", "git_attack", attack=attack)
    spec = BenchSpec(
        root=tmp_path / "runs" / "b1",
        tasks=load_suite(tmp_path / "suite"),
        contestants=[attacker],
        sandbox=sandbox,
    )

    result = run_bench(spec, executor=inline_executor, resamples=50)

    [row] = result.rows
    assert not marker.exists()
    assert row.outcome != "harness_error" and row.passed is False  # graded as the wrong code
    assert (folder / "tests" / "test_hidden.py").read_bytes() == hidden_before
    [run_output] = [
        c.output
        for s in load_run(result.root / row.folder).model_steps
        for c in s.tool_calls
        if c.name == "run"
    ]
    assert ".git" in run_output  # it did make its repository
