"""What a run starts for its own bookkeeping, counted (issue 48): a git on PATH that logs each
call before it runs the real one, around a scripted forty-step run of the bug task."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from stepswitch.gates import probe
from tests.harness.repo import logging_git
from tests.harness.task import (
    approve_and_summarize,
    done,
    run_ssw,
    tool,
    tried_plus_two,
)

# The run's git processes: the pre-flight, the worktree, two gate runs, the diffs, the commit.
# Before issue 48 this run started 61 of them (`ls-files --others` 20 times; `hash-object`,
# `update-index` and `write-tree` 7), 37 after ADR 0074, 20 since the objects come through one
# `cat-file --batch`, a listing is kept while the tree's shape holds and a diff asked again is
# not run again (ADR 0083), 18 since ssw writes the commit object and reads the line counts
# from the review's diff (ADR 0089), 16 since new paths are asked of one `check-ignore` and
# the excludes file is found without `git config` where no configuration could name one (ADR 0090),
# 14 since `ssw run` finds the checkout once for its clean check, the .ssw/ exclusion and
# the worktree (ADR 0091).
MOST_GIT_PROCESSES = 14


def _forty_steps() -> list[dict[str, object]]:
    look = [tool("list_dir"), tool("list_dir", path="calc"), tool("find_files", pattern="*.py")]
    read = [tool("read", path="calc/ops.py"), tool("search", pattern="def mean")]
    return [
        *look, *look[:2], done("plan"),  # plan
        *look, *read[1:], *look[:2], done("calc/ops.py"),  # navigate
        *read, *read, *read, tool("read", path="tests/test_ops.py"), done("n + 1"),  # read
        *read, *read, *read, done("fails"),  # run
        *tried_plus_two(),  # edit, gates fail, triage
        *read, tool("edit", path="calc/ops.py", old="(len(values) + 2)", new="len(values)"),
        *read, done("fixed"),  # edit, gates pass
        *approve_and_summarize(),
    ]  # fmt: skip


def _subcommand(logged: str) -> str:
    """`status` of `-c core.fsmonitor=false ... status --porcelain` (every -c value has a =)."""
    return next(w for w in logged.split() if not w.startswith("-") and "=" not in w)


def test_a_forty_step_run_starts_few_git_processes(tmp_path, monkeypatch, bug_repo):
    log = logging_git(tmp_path, monkeypatch)
    probes: list[list[str]] = []  # the gates' interpreter probes, each still run for real
    real_probe = probe.run_probe

    def noted_probe(argv: list[str], cwd: Path, env: Any = None) -> Any:
        probes.append(argv)
        return real_probe(argv, cwd, env)

    monkeypatch.setattr(probe, "run_probe", noted_probe)

    finished = run_ssw(tmp_path, bug_repo, _forty_steps())

    assert finished.record.outcome == "done", finished.record.reason
    assert finished.record.totals.steps == 40
    assert [g.passed for g in finished.gates] == [False, True]
    assert "return sum(values) / len(values)" in finished.on_branch("calc/ops.py")
    calls = log.read_text(encoding="utf-8").splitlines()
    by_command = Counter(_subcommand(call) for call in calls)
    # The snapshots' files and trees are stored without git (plain names: ADR 0074).
    assert not {"hash-object", "update-index", "write-tree"} & set(by_command)
    # One probe of the gates' Python, asked while the worktree was made, answers the pre-flight's
    # pytest and every later gate run's shadowing check (ADR 0091).
    assert len(probes) == 1, probes
    assert len(calls) <= MOST_GIT_PROCESSES, " ".join(
        f"{k}:{n}" for k, n in sorted(by_command.items())
    )
