"""A finished run's change onto the user's current branch (`ssw runs apply`): a merge commit
(`git merge --no-ff`) or, asked for, the run's own commits cherry-picked, in the user's own
checkout and only when it is clean. A change that does not apply is aborted: the checkout is
left as it was. git runs through the hardened runner: no hook, fsmonitor or other program
starts, not even the user's own (docs/decisions/0031-applying-a-run.md). What it may write, and
the bytes it leaves, are judged in apply_checks
(docs/decisions/0045-apply-changes-nothing-it-was-not-asked-to.md)."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from stepswitch.agent.workspace.apply_checks import (
    DEFAULT_MAX_FILE_MB,
    blob_sizes,
    configured,
    filters_named,
    forceable_refusals,
    merge_drivers_named,
    not_as_judged,
    unholdable,
    untracked_in_the_way,
    written,
)
from stepswitch.agent.workspace.runs import ABANDONED, BRANCH_PREFIX, NO_RECORD, find_run
from stepswitch.agent.workspace.spend import UNREAD
from stepswitch.agent.workspace.worktree import some_paths, uncommitted_paths
from stepswitch.errors import ChangeConflicts, GitFailed, SswError, UsageError
from stepswitch.records.folder import load_run
from stepswitch.records.run import RunRecord
from stepswitch.util.git import Checkout, GitResult, discover, run_git
from stepswitch.util.text import escape_controls

# The merge writes at the paths the diffs name, the blobs as committed: no rename moving a file
# to a path nobody looked at, no renormalizing.
_AS_JUDGED = (
    *("-c", "merge.renames=false"),
    *("-c", "merge.directoryRenames=false"),
    *("-c", "merge.renormalize=false"),
)
_FILTER_KEYS = frozenset({"clean", "smudge", "process", "required"})


@dataclass(frozen=True)
class Applied:
    run_id: str
    how: str  # "merged" or "cherry-picked"
    onto: str  # the branch, or "detached HEAD"
    commits: list[tuple[str, str]]  # the run's commits applied: (id, subject), oldest first
    head: str  # HEAD after; the same as before when nothing was applied
    picked: list[str] = field(default_factory=list)  # the new commits a cherry-pick made
    note: str | None = None  # a run that did not end done: said beside what was applied
    forced: list[str] = field(default_factory=list)  # what --force lifted, said first


class _Checkout:
    """git on the user's own checkout, with the user's configuration (identity, merge
    settings) and the folders named outright; the runner switches every hook off, and every
    filter the user's configuration defines is emptied here, so no filter program starts."""

    def __init__(self, found: Checkout) -> None:
        self.found = found
        self.no_filters: tuple[str, ...] = ()
        self.no_filters = tuple(self._no_filters())

    def _no_filters(self) -> list[str]:
        off = []
        for name in sorted(configured(self.run, "filter", _FILTER_KEYS)):
            off += [f"filter.{name}.{key}=" for key in ("clean", "smudge", "process")]
            off.append(f"filter.{name}.required=false")
        return [arg for setting in off for arg in ("-c", setting)]

    def run(self, *args: str, input: bytes | None = None, index: Path | None = None) -> GitResult:
        return run_git(
            self.found.top,
            *self.no_filters,
            *args,
            env=os.environ,  # the user's GIT_AUTHOR_*/GIT_COMMITTER_* identity, if set
            git_dir=self.found.git_dir,
            work_tree=self.found.top,
            index=index,
            input=input,
            user_config=True,
        )

    def out(self, *args: str) -> str:
        done = self.run(*args)
        if done.status != 0:
            raise GitFailed(f"{self.found.top}: git {args[0]} failed: {done.err}")
        return done.out.strip()

    def has(self, ref: str) -> bool:
        return self.run("rev-parse", "--quiet", "--verify", ref).status == 0

    def head(self) -> str:
        return self.out("rev-parse", "--verify", "HEAD^{commit}")


def _record(repo: Path, run_id: str) -> tuple[RunRecord, str]:
    """The run's record and its branch's last commit, or the one-line reason it cannot apply."""
    entry = find_run(repo, run_id, UNREAD)  # no dollars needed: the ledger is not opened
    if entry.outcome == "running":
        pid = f"pid {entry.pid}" if entry.pid else "its lock is held"
        raise UsageError(f"run {run_id} is still running ({pid}): apply it once it has ended")
    if entry.outcome == NO_RECORD or entry.record is None or entry.problem is not None:
        why = entry.problem or "it has no run.json, so nothing says what it committed"
        raise UsageError(f"run {run_id} cannot be applied: {why}")
    record = load_run(entry.record).run
    if record.commit is None:
        ended = ABANDONED if entry.outcome == ABANDONED else f"{record.outcome}: {record.reason}"
        raise UsageError(f"run {run_id} made no commit ({ended}): nothing to apply")
    if entry.branch is None:
        raise UsageError(
            f"run {run_id}'s branch {BRANCH_PREFIX}{run_id} is gone (`ssw runs clean` "
            "removes it): nothing to apply"
        )
    return record, f"refs/heads/{BRANCH_PREFIX}{run_id}"


def _user_checkout(repo: Path, run_id: str) -> tuple[_Checkout, str]:
    found = discover(repo)
    if found is None:
        raise UsageError(f"{repo} is not in a git repository (fix: pass --repo PATH)")
    if found.head is None:
        raise UsageError(f"{repo} has no commits yet: there is no branch to apply run {run_id} to")
    if found.branch == f"{BRANCH_PREFIX}{run_id}":
        raise UsageError(
            f"{repo} is on the run's own branch {found.branch}: switch to the branch to apply it to"
        )
    dirty = uncommitted_paths(repo)
    if dirty:
        raise UsageError(
            f"{repo} has uncommitted changes ({some_paths(dirty)}): commit or stash them before "
            f"applying run {run_id}"
        )
    return _Checkout(found), found.branch or "detached HEAD"


def _to_apply(git: _Checkout, record: RunRecord, tip: str) -> list[tuple[str, str]]:
    """The run's commits that HEAD has not, as commits or as the same patch, and that change
    something; oldest first."""
    base = record.base_commit
    if not base or not git.has(f"{base}^{{commit}}"):
        base = git.out("merge-base", "HEAD", tip)
    cherry = git.out("cherry", "HEAD", tip, base)
    missing = [line[2:] for line in cherry.splitlines() if line.startswith("+ ")]
    commits = []
    for commit in missing:
        # Exit 1: the commit changes files; an empty commit (or a merge) holds nothing to apply.
        if git.run("diff-tree", "--quiet", "-r", commit).status == 1:
            subject = git.out("log", "-1", "--format=%s", commit)
            commits.append((commit, escape_controls(subject, keep_newlines=False)))
    return commits


def _conflicted(git: _Checkout) -> list[str]:
    names = git.run("diff", "--name-only", "--diff-filter=U", "-z").out
    return [n for n in names.split("\0") if n]


def _undo(git: _Checkout, command: str, before: str) -> None:
    """Abort a merge or cherry-pick git left half done; the checkout must be as it was."""
    pending = "MERGE_HEAD" if command == "merge" else "CHERRY_PICK_HEAD"
    if git.has(pending) or git.head() != before:
        git.run(command, "--abort")
    _check_back(git, before, f"git {command} --abort", f"`git {command} --abort` or ")


def _check_back(git: _Checkout, before: str, what: str, fix: str = "") -> None:
    if git.head() != before or uncommitted_paths(git.found.top):
        raise GitFailed(
            f"{git.found.top}: {what} did not restore the checkout to {before[:12]} (fix: `git "
            f"status`, then {fix}`git reset --keep {before[:12]}`)"
        )


def _shown(paths: list[str], most: int) -> str:
    """Paths for one line: control characters escaped, the first `most` of them."""
    shown = ", ".join(escape_controls(p, keep_newlines=False) for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")


@dataclass(frozen=True)
class _Plan:
    record: RunRecord
    git: _Checkout
    onto: str
    tip: str
    before: str
    base: str  # where the user's branch and the run's meet: what the merge starts from
    commits: list[tuple[str, str]]
    paths: list[str]  # every path the applied commits write, one after the other
    refusals: list[str]  # what --force lifts


def _plan(repo: Path, run_id: str, cherry_pick: bool, max_bytes: int) -> _Plan:
    """Everything apply judges before it changes anything: a UsageError for what no flag lifts
    (a run or checkout it cannot be done with, something git does not track in the way)."""
    record, branch_ref = _record(repo, run_id)
    git, onto = _user_checkout(repo, run_id)
    tip = git.out("rev-parse", "--verify", f"{branch_ref}^{{commit}}")
    before = git.head()
    commits = _to_apply(git, record, tip)
    base = git.out("merge-base", before, tip)
    # Judged from the commits applied (the branch as it is now), not the record's list; a
    # cherry-pick writes each commit in turn, so a path one adds and a later one removes counts.
    writes = written(git.run, base, tip)
    if cherry_pick:
        for commit, _ in commits:
            writes += written(git.run, f"{commit}^", commit)
    paths = sorted({w.path for w in writes})
    outside = unholdable(writes)
    if outside:
        raise UsageError(
            f"run {run_id} is not applied: its commits hold paths no checkout may have: "
            f"{_shown(outside, 5)} "
            "(a tree made by hand); nothing was changed"
        )
    in_the_way = untracked_in_the_way(git.run, git.found.top, paths) if commits else []
    if in_the_way:
        raise UsageError(
            f"run {run_id} would write where your checkout has what git does not track: "
            f"{_shown(in_the_way, 5)}; nothing was changed (fix: move them aside first; "
            f"`ssw runs show {run_id} --diff` shows the change)"
        )
    drivers = merge_drivers_named(git.run, paths, before, base, tip) if commits else []
    if drivers:  # git offers no way to switch a merge driver off: --force does not lift this
        raise UsageError(
            f"run {run_id} is not applied: your attributes give {_shown(drivers, 3)}, a "
            "file your branch changed too: git would start that merge driver (fix: `git merge "
            f"{BRANCH_PREFIX}{run_id}` yourself)"
        )
    refusals = []
    if commits:
        drivers = filters_named(git.run, paths, tip)
        sizes = blob_sizes(git.run, writes)
        refusals = forceable_refusals(record, tip, writes, drivers, max_bytes, sizes)
    return _Plan(record, git, onto, tip, before, base, commits, paths, refusals)


def apply_refusals(repo: Path, run_id: str, max_file_mb: float = DEFAULT_MAX_FILE_MB) -> list[str]:
    """What `ssw runs apply ID` would refuse in `repo` as it is now (with its defaults): the
    one line that no flag lifts, or each thing --force lifts; [] when it would apply."""
    try:
        plan = _plan(repo, run_id, False, _max_bytes(max_file_mb))
    except SswError as refused:
        return [refused.message.removeprefix(f"run {run_id} ").removeprefix("is not applied: ")]
    return plan.refusals


def _max_bytes(max_file_mb: float) -> int:
    if not (max_file_mb > 0 and math.isfinite(max_file_mb)):
        raise UsageError(f"--max-file-mb must be a number of MB more than 0, not {max_file_mb:g}")
    return int(max_file_mb * 2**20)


def apply_run(
    repo: Path,
    run_id: str,
    cherry_pick: bool = False,
    force: bool = False,
    max_file_mb: float = DEFAULT_MAX_FILE_MB,
) -> Applied:
    """Apply run `run_id`'s commits to `repo`'s current branch: a merge commit, or with
    `cherry_pick` the commits themselves. A UsageError for a run or checkout it cannot be done
    with, or (unless `force`) a change it does not take as it is; ChangeConflicts, with the
    checkout restored, when the change does not apply or does not leave the bytes the gates
    ran."""
    plan = _plan(repo, run_id, cherry_pick, _max_bytes(max_file_mb))
    git, record, before, commits = plan.git, plan.record, plan.before, plan.commits
    if plan.refusals and not force:
        raise UsageError(
            f"run {run_id} is not applied: {'; '.join(plan.refusals)} (fix: look at `ssw runs "
            f"show {run_id} --diff`; --force applies it anyway)"
        )
    forced = plan.refusals if force else []
    note = None
    if record.outcome != "done":
        note = f"run {run_id} ended {record.outcome} ({record.reason}): its change is applied as is"
    how = "cherry-picked" if cherry_pick else "merged"
    onto = plan.onto
    if not commits:
        return Applied(run_id, how, onto, [], before, note=note)
    if cherry_pick:
        command = "cherry-pick"
        done = git.run(*_AS_JUDGED, "cherry-pick", *(c for c, _ in commits))
    else:
        command = "merge"
        message = f"Merge ssw run {run_id}: {commits[-1][1]}\n\nSsw-Run: {run_id}\n"
        # The commit judged, not the branch's name: a branch moved since is not merged unseen.
        done = git.run(*_AS_JUDGED, "merge", "--no-ff", "--no-edit", "-m", message, plan.tip)
    if done.status != 0:
        conflicts = _conflicted(git)
        _undo(git, command, before)
        if not conflicts:  # git refused before it began (no identity, a file in the way)
            why = done.err.splitlines()[0] if done.err else f"exit {done.status}"
            raise GitFailed(f"{repo}: git {command} failed: {why}; the checkout is as it was")
        what = " ".join(c[:12] for c, _ in commits) if cherry_pick else BRANCH_PREFIX + run_id
        raise ChangeConflicts(
            f"run {run_id} does not apply to {onto}: conflicts in {some_paths(conflicts)}; the "
            f"{command} was aborted and the checkout is as it was (fix: `git {command} {what}` "
            "yourself to resolve them)"
        )
    wrong = not_as_judged(git.run, git.found.top, plan.paths, before, plan.base, plan.tip)
    if wrong:
        git.run("reset", "-q", "--keep", before)
        _check_back(git, before, f"git reset --keep {before[:12]}")
        raise ChangeConflicts(
            f"run {run_id} was {how} and undone: the checkout did not hold the bytes its gates "
            f"ran in {_shown(wrong, 5)} (your attributes or configuration convert them: eol, "
            "ident, working-tree-encoding); HEAD and the files are as they were"
        )
    head = git.head()
    picked = git.out("rev-list", "--reverse", f"{before}..{head}").split() if cherry_pick else []
    return Applied(run_id, how, onto, commits, head, picked=picked, note=note, forced=forced)


def applied_lines(done: Applied) -> list[str]:
    """What `ssw runs apply` says it did."""
    lines = [f"--force: applied despite: {'; '.join(done.forced)}"] if done.forced else []
    lines += [done.note] if done.note else []
    if not done.commits:
        return [*lines, f"nothing to apply: {done.onto} already has run {done.run_id}'s change"]
    count = f"{len(done.commits)} commit" + ("s" if len(done.commits) > 1 else "")
    if done.picked:
        lines.append(f"cherry-picked {count} of run {done.run_id} onto {done.onto}:")
        for (commit, subject), new in zip(done.commits, done.picked, strict=False):
            lines.append(f"  {commit[:12]} -> {new[:12]} {subject}")
    else:
        lines.append(f"merged run {done.run_id} ({count}) into {done.onto} with a merge commit:")
        lines += [f"  {commit[:12]} {subject}" for commit, subject in done.commits]
    lines.append(f"HEAD is now {done.head[:12]} ({done.onto})")
    return lines
