"""What a run leaves when its process dies (kill -9), and `ssw runs` / `ssw runs clean`: real git,
real processes killed for real, the command run as the user runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.agent.workspace.runs import (
    ABANDONED,
    RunEntry,
    abandoned_notice,
    clean_runs,
    list_runs,
    unrecorded_commits,
)
from stepswitch.agent.workspace.worktree import (
    Worktree,
    check_clean,
    commit_all,
    create_worktree,
    exclude_ssw_folder,
    lock_path,
    open_worktree,
    remove_worktree,
)
from stepswitch.errors import UsageError
from tests.harness.cli import run_ssw_cli
from tests.harness.repo import git, sample_repo

# A stand-in for `ssw run` up to its first model call: the worktree made the way the run makes
# it, run.json saying "running"; then it waits on stdin until the test kills it or lets it go.
RUNNER = """
import json, sys
from pathlib import Path
from stepswitch.agent.workspace.worktree import create_worktree

repo, run_id, with_record = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "record"
worktree = create_worktree(repo, run_id)
folder = repo / ".ssw" / "runs" / run_id
folder.mkdir(parents=True)
(folder / "run.json" if with_record else folder / "unwritten").write_text(json.dumps({
    "schema_version": 2,
    "ids": {"run_id": run_id, "task_id": run_id},
    "task": "fix mean",
    "branch": worktree.branch,
    "worktree": f".ssw/worktrees/{run_id}",
    "base_commit": worktree.base_commit,
    "ssw_version": "test",
    "policy_path": "policy.toml",
    "policy_sha256": "",
    "policy": {},
    "started_at": "2026-12-01T00:00:00+00:00",
    "outcome": "running",
    "totals": {"cost": {"low": 0.25, "high": 0.5}},
}))
print("started", flush=True)
sys.stdin.read()
"""


class Runner:
    """A run in a real process: `kill()` ends it with SIGKILL, as a crash or `kill -9` would."""

    def __init__(self, repo: Path, run_id: str, record: bool = True) -> None:
        self.run_id = run_id
        self.proc = subprocess.Popen(
            [sys.executable, "-c", RUNNER, str(repo), run_id, "record" if record else "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until the worktree and run.json exist
        assert line == "started\n", f"the runner did not start: {line!r}"

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.close()

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self.proc.wait(timeout=30)


def opened(repo: Path, run_id: str) -> Worktree:
    worktree = open_worktree(repo, run_id)
    assert worktree is not None
    return worktree


def ssw(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return run_ssw_cli([*args, "--repo", str(repo)], env=env, timeout=60)


def listed(repo: Path) -> dict[str, dict]:
    result = ssw(repo, "runs", "--json")
    assert result.returncode == 0, result.stderr
    return {row["id"]: row for row in json.loads(result.stdout)}


def by_id(repo: Path) -> dict[str, RunEntry]:
    return {e.run_id: e for e in list_runs(repo)}


def said(repo: Path, run_id: str | None = None, force: bool = False) -> str:
    """What `ssw runs clean` does, in-process: one line per thing removed or kept."""
    lines = []
    for c in clean_runs(repo, run_id, force):
        lines += [f"{c.run_id}: removed {w}" for w in c.removed]
        lines += [f"{c.run_id}: kept {w}" for w in c.kept]
    return "\n".join(lines)


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def worktrees(repo: Path) -> int:
    return git(repo, "worktree", "list", "--porcelain").count("worktree ")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return sample_repo(tmp_path / "repo", "mean_bug")


@pytest.fixture
def killed(repo: Path) -> Iterator[str]:
    """The id of a run killed with SIGKILL after it made its worktree and run.json."""
    runner = Runner(repo, "20261201-000000-aaaaaa")
    runner.kill()
    yield runner.run_id


# --- what a killed run leaves, and how it is listed ---


def test_a_killed_run_is_listed_as_abandoned_with_its_worktree_branch_and_dollars(
    repo: Path, killed: str
):
    row = listed(repo)[killed]
    assert row["outcome"] == ABANDONED
    assert (row["branch"], row["worktree"]) == (f"ssw/{killed}", True)
    assert row["dollars"] == {"low": 0.25, "high": 0.5}
    assert row["record"] == f".ssw/runs/{killed}"
    table = ssw(repo, "runs").stdout
    assert killed in table and "abandoned" in table and "$0.2500-$0.5000" in table
    assert "`ssw runs clean --all`" in table


def test_a_ledger_named_with_ledger_that_cannot_be_read_is_one_line_not_left_out(
    repo: Path, killed: str, tmp_path: Path
):
    """Issue 45: `ssw runs --ledger FILE` listed the records' dollars and said nothing when FILE
    was not a ledger. A ledger the user names is read, or the command says why not."""
    damaged = tmp_path / "copy.sqlite"
    damaged.write_text("not a database\n")
    for path in (damaged, tmp_path / "missing.sqlite"):
        result = ssw(repo, "runs", "--ledger", str(path))
        assert result.returncode == 2 and result.stdout == ""
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"ssw: ledger {path}: ")
    assert damaged.read_text() == "not a database\n"  # left as it was


def test_a_live_run_is_listed_as_running_with_its_pid_and_never_cleaned(repo: Path):
    runner = Runner(repo, "20261201-000000-bbbbbb")
    try:
        entry = by_id(repo)[runner.run_id]
        assert (entry.outcome, entry.pid) == ("running", runner.proc.pid)
        assert abandoned_notice(repo) is None

        assert clean_runs(repo, None) == []  # --all leaves a live run alone
        named = ssw(repo, "runs", "clean", runner.run_id)
        assert named.returncode == 1
        assert f"{runner.run_id}: kept still running (pid {runner.proc.pid})" in named.stdout
        assert (repo / ".ssw" / "worktrees" / runner.run_id).is_dir()
    finally:
        runner.close()
    # It ended without finishing its record (as if it crashed): now it is abandoned.
    assert by_id(repo)[runner.run_id].outcome == ABANDONED


def test_a_run_killed_before_its_first_record_is_abandoned_and_cleaned_too(repo: Path):
    runner = Runner(repo, "20261201-000000-cccccc", record=False)
    runner.kill()

    entry = by_id(repo)[runner.run_id]
    assert (entry.outcome, entry.record, entry.worktree is not None) == (ABANDONED, None, True)
    assert f"{runner.run_id}: removed branch ssw/{runner.run_id}" in said(repo)
    assert branches(repo) == ["main"] and worktrees(repo) == 1


def test_the_next_run_is_told_about_abandoned_runs(repo: Path, killed: str):
    notice = abandoned_notice(repo)
    assert notice is not None
    assert f"1 earlier run(s) ended without finishing (their ssw process is gone): {killed}" in (
        notice
    )
    assert "`ssw runs clean --all`" in notice


# --- cleaning ---


def test_clean_all_removes_an_abandoned_runs_worktree_and_branch_and_keeps_its_record(
    repo: Path, killed: str
):
    result = ssw(repo, "runs", "clean", "--all")

    assert result.returncode == 0, result.stderr
    assert f"{killed}: removed worktree .ssw/worktrees/{killed}" in result.stdout
    assert f"{killed}: removed branch ssw/{killed}" in result.stdout
    assert branches(repo) == ["main"] and worktrees(repo) == 1
    assert not lock_path(repo, killed).exists()
    record = json.loads((repo / ".ssw" / "runs" / killed / "run.json").read_text())
    assert record["outcome"] == "interrupted" and record["reason"].startswith("abandoned")
    assert record["totals"]["cost"] == {"low": 0.25, "high": 0.5}  # the rest as it was
    assert by_id(repo)[killed].outcome == "interrupted"
    assert abandoned_notice(repo) is None
    assert git(repo, "status", "--porcelain") == ""


def test_clean_keeps_a_branch_with_commits_on_no_other_branch_unless_forced(
    repo: Path, killed: str
):
    worktree = repo / ".ssw" / "worktrees" / killed
    (worktree / "calc" / "ops.py").write_text("def mean(values):\n    return 0\n")
    commit_all(opened(repo, killed), "Half a fix")

    kept = ssw(repo, "runs", "clean", killed)
    assert kept.returncode == 1
    assert (
        f"{killed}: kept branch ssw/{killed} has 1 commit(s) on no other branch ('Half a fix'): "
        "merge or push it, or pass --force to delete it"
    ) in kept.stdout
    assert f"removed worktree .ssw/worktrees/{killed}" in kept.stdout  # committed: safe to drop
    assert f"ssw/{killed}" in branches(repo)

    forced = ssw(repo, "runs", "clean", killed, "--force")
    assert forced.returncode == 0, forced.stdout
    assert f"removed branch ssw/{killed}" in forced.stdout
    assert branches(repo) == ["main"]


def test_clean_keeps_a_worktree_with_uncommitted_changes_unless_forced(repo: Path, killed: str):
    worktree = repo / ".ssw" / "worktrees" / killed
    (worktree / "notes.txt").write_text("the agent's unfinished work\n")

    assert f"kept worktree .ssw/worktrees/{killed} has uncommitted changes (1 file: notes.txt)" in (
        said(repo)
    )
    assert (worktree / "notes.txt").exists() and f"ssw/{killed}" in branches(repo)

    forced = ssw(repo, "runs", "clean", killed, "--force")
    assert forced.returncode == 0, forced.stdout
    assert not worktree.exists() and branches(repo) == ["main"] and worktrees(repo) == 1


def test_a_merged_branch_of_a_finished_run_is_deleted_and_an_unmerged_one_kept(repo: Path):
    for run_id in ("20261201-000000-merged", "20261201-000000-unmerg"):
        worktree = create_worktree(repo, run_id)
        (worktree.path / f"{run_id}.txt").write_text("the change\n")
        commit_all(worktree, f"change {run_id}")
        remove_worktree(worktree)
    git(repo, "merge", "-q", "--ff-only", "ssw/20261201-000000-merged")

    result = said(repo)

    assert "20261201-000000-merged: removed branch ssw/20261201-000000-merged" in result
    assert "20261201-000000-unmerg: kept branch ssw/20261201-000000-unmerg" in result
    assert branches(repo) == ["main", "ssw/20261201-000000-unmerg"]


def test_a_squash_merged_change_counts_as_recorded(repo: Path):
    worktree = create_worktree(repo, "20261201-000000-squash")
    (worktree.path / "calc" / "ops.py").write_text("def mean(values):\n    return 1\n")
    commit_all(worktree, "the change")
    remove_worktree(worktree)
    git(repo, "cherry-pick", "ssw/20261201-000000-squash")

    assert unrecorded_commits(repo, "ssw/20261201-000000-squash") == []


def test_clean_of_an_unknown_id_and_without_a_target_are_usage_errors(repo: Path):
    unknown = ssw(repo, "runs", "clean", "nope")
    assert unknown.returncode == 2
    assert unknown.stderr == f"ssw: no run 'nope' in {repo} (fix: `ssw runs` lists them)\n"
    neither = ssw(repo, "runs", "clean")
    assert neither.returncode == 2 and "--all" in neither.stderr


def test_runs_outside_a_repository_is_one_line_with_exit_2(tmp_path: Path):
    result = ssw(tmp_path, "runs")
    assert result.returncode == 2
    assert result.stderr == f"ssw: {tmp_path} is not in a git repository (fix: pass --repo PATH)\n"


def test_a_repository_without_runs_lists_none(repo: Path):
    assert ssw(repo, "runs").stdout == f"no runs in {repo}\n"
    assert list_runs(repo) == []


# --- the checkout a run starts from ---


def _exclusion_holds(checkout: Path) -> None:
    exclude_ssw_folder(checkout)
    exclude_ssw_folder(checkout)  # once is enough: no second line
    (checkout / ".ssw" / "runs").mkdir(parents=True)
    (checkout / ".ssw" / "ledger.sqlite").write_text("")
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""
    exclude = Path(git(checkout, "rev-parse", "--git-path", "info/exclude").strip())
    exclude = exclude if exclude.is_absolute() else checkout / exclude
    assert exclude.read_text().split().count(".ssw/") == 1


def test_ssw_folder_is_excluded_in_a_plain_repository(repo: Path):
    _exclusion_holds(repo)


def test_ssw_folder_is_excluded_in_a_linked_worktree(repo: Path, tmp_path: Path):
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    assert (linked / ".git").is_file()
    _exclusion_holds(linked)


def test_ssw_folder_is_excluded_in_a_repository_without_commits_or_info_folder(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "--template=", "-b", "main")  # no .git/info at all
    assert not (empty / ".git" / "info").exists()
    _exclusion_holds(empty)


def test_ssw_folder_is_excluded_with_a_separate_git_dir(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", f"--separate-git-dir={tmp_path / 'store.git'}")
    _exclusion_holds(work)


def test_a_checkout_with_uncommitted_changes_is_refused_naming_them(repo: Path):
    (repo / "calc" / "ops.py").write_text("# edited\n")
    (repo / "notes.txt").write_text("untracked\n")
    (repo / ".ssw").mkdir()  # ssw's own folder is never a change
    with pytest.raises(UsageError) as refused:
        check_clean(repo)
    assert str(refused.value) == (
        f"{repo} has uncommitted changes (2 files: calc/ops.py, notes.txt): they would be left "
        "out of the run (commit or stash them, or pass --allow-dirty)"
    )
    assert check_clean(repo, allow_dirty=True) == ["calc/ops.py", "notes.txt"]


def test_a_clean_checkout_passes_and_caches_of_the_tools_do_not_count(repo: Path):
    (repo / "calc" / "__pycache__").mkdir()
    (repo / "calc" / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"\0")
    assert check_clean(repo) == []


def test_a_repository_without_commits_is_refused_before_anything_is_made(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    with pytest.raises(UsageError, match="has no commits yet; commit something first"):
        check_clean(empty)
    assert sorted(p.name for p in empty.iterdir()) == [".git"]


# --- `ssw run` itself: killed for real, told about what earlier runs left, --allow-dirty ---


def ssw_run(repo: Path, tmp_path: Path, replies: list[dict], *args: str) -> subprocess.Popen[str]:
    from tests.harness.task import DEFAULT_POLICY, write_policy, write_script

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("SSW_LEDGER", None)
    command = [sys.executable, "-m", "stepswitch", "run", str(repo), "--task", "fix mean"]
    command += ["--policy", str(write_policy(tmp_path, DEFAULT_POLICY))]
    command += ["--script", str(write_script(tmp_path, replies)), *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def first_lines(proc: subprocess.Popen[str], until: str) -> list[str]:
    """What the run printed up to (and with) the line that starts with `until`."""
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:  # blocks on the pipe: no polling
        lines.append(line.rstrip("\n"))
        if line.startswith(until):
            return lines
    raise AssertionError(f"the run ended (exit {proc.wait()}) without {until!r}: {lines}")


@pytest.mark.slow
def test_ssw_run_killed_with_sigkill_mid_call_is_abandoned_and_cleaned(repo: Path, tmp_path: Path):
    # The first model call waits 600 s: the run is surely mid-call when it is killed.
    proc = ssw_run(repo, tmp_path, [{"content": "", "delay_s": 600}])
    started = first_lines(proc, "ssw run ")[-1]
    run_id = started.split()[2].rstrip(":")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.stdout is not None
    proc.stdout.close()

    row = listed(repo)[run_id]
    assert (row["outcome"], row["branch"], row["worktree"]) == (ABANDONED, f"ssw/{run_id}", True)
    cleaned = ssw(repo, "runs", "clean", "--all")
    assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
    assert branches(repo) == ["main"] and worktrees(repo) == 1
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.slow
def test_the_next_ssw_run_says_what_earlier_runs_left_and_a_dirty_checkout_left_out(
    repo: Path, tmp_path: Path, killed: str
):
    (repo / "notes.txt").write_text("not committed\n")
    proc = ssw_run(repo, tmp_path, [{"content": "stop here"}], "--allow-dirty", "--max-steps", "1")
    lines = first_lines(proc, "ssw run ")
    rest = proc.communicate(timeout=120)[0]
    assert proc.returncode == 1, "\n".join(lines) + rest

    assert any(f"ended without finishing (their ssw process is gone): {killed}" in x for x in lines)
    assert f"--allow-dirty: the run starts from {repo}'s last commit; its uncommitted changes " in (
        "\n".join(lines)
    )
    record = next(
        json.loads(p.read_text())
        for p in (repo / ".ssw" / "runs").glob("*/run.json")
        if killed not in str(p)
    )
    assert record["allow_dirty"] is True
    assert (repo / "notes.txt").read_text() == "not committed\n"


def test_a_checkout_cut_short_before_the_first_record_is_no_work_and_is_cleaned(repo: Path):
    runner = Runner(repo, "20261201-000000-dddddd", record=False)
    runner.kill()
    worktree = repo / ".ssw" / "worktrees" / runner.run_id
    files = sorted(p for p in worktree.rglob("*") if p.is_file())
    assert files  # the control: a whole checkout, cut short below
    for path in files[: len(files) // 2 + 1]:
        path.unlink()  # as if killed while ssw wrote the base commit's files

    out = said(repo)

    assert f"{runner.run_id}: removed worktree" in out, out
    assert f"{runner.run_id}: removed branch ssw/{runner.run_id}" in out, out
    assert branches(repo) == ["main"]


def test_a_file_added_in_a_worktree_without_a_record_is_still_kept(repo: Path):
    runner = Runner(repo, "20261201-000000-eeeeee", record=False)
    runner.kill()
    worktree = repo / ".ssw" / "worktrees" / runner.run_id
    (worktree / "notes.txt").write_text("someone's work\n")

    out = said(repo)

    assert f"{runner.run_id}: kept worktree" in out and "notes.txt" in out, out
    assert (worktree / "notes.txt").is_file()


@pytest.mark.slow
def test_a_run_killed_mid_call_is_continued_in_one_command_with_its_uncommitted_edit(
    repo: Path, tmp_path: Path
):
    from .harness.task import (
        FIX_LINE,
        approve_and_summarize,
        done,
        explore,
        fix_the_bug,
        write_script,
    )

    # The review's call waits 600 s: the fix is in the worktree, not yet committed, when killed.
    proc = ssw_run(repo, tmp_path, [*explore(), *fix_the_bug(), {"content": "", "delay_s": 600}])
    run_id = first_lines(proc, "ssw run ")[-1].split()[2].rstrip(":")
    first_lines(proc, "    gates     passed")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.stdout is not None
    proc.stdout.close()
    worktree = repo / ".ssw" / "worktrees" / run_id
    assert FIX_LINE in (worktree / "calc" / "ops.py").read_text()  # the control: work was left,
    assert FIX_LINE not in git(repo, "show", f"ssw/{run_id}:calc/ops.py")  # uncommitted

    replies = [done("mean divides by len(values)."), *approve_and_summarize()]
    (tmp_path / "later").mkdir()
    script = write_script(tmp_path / "later", replies)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = ["run", str(repo), "--continue", run_id, "--script", str(script)]
    result = run_ssw_cli(command, env=env, timeout=120)

    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert (
        f"run {run_id}'s process was gone: its record now says interrupted, and what it left "
        "uncommitted (1 file: calc/ops.py) is committed on its branch and in this tree"
    ) in out
    earlier = json.loads((repo / ".ssw" / "runs" / run_id / "run.json").read_text())
    assert earlier["outcome"] == "interrupted"
    assert "found by `ssw run --continue`" in earlier["reason"]
    assert FIX_LINE in git(repo, "show", f"ssw/{run_id}:calc/ops.py")  # nothing lost
    [later] = [p for p in (repo / ".ssw" / "runs").glob("*/run.json") if run_id not in str(p)]
    assert json.loads(later.read_text())["outcome"] == "done"
