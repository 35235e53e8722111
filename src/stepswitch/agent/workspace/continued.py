"""`ssw run --continue ID`: what an earlier run that did not finish left to go on from. The new
run starts from the earlier run's base commit (the gates' truth and the pre-flight stay that
commit's, never the earlier run's model-written change) on a new branch after the earlier
branch's last commit; its work tree then gets that commit's files before the first step. Its
calls count against the same task budget as the earlier run's (one task id). It takes up the
work where the earlier run stopped: the plan and the summaries its records hold are not asked
for again, and it starts on the rung the earlier run stood on (ADR 0051)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stepswitch.agent.workspace.runs import (
    ABANDONED,
    find_run,
    valid_run_id,
)
from stepswitch.agent.workspace.worktree import (
    changed_paths,
    commit_all,
    open_worktree,
    some_paths,
)
from stepswitch.errors import UsageError
from stepswitch.ledger.book import Ledger, counted
from stepswitch.policy.model import Policy
from stepswitch.records.abandoned import mark_abandoned_run
from stepswitch.records.folder import load_run
from stepswitch.records.run import RunRecord
from stepswitch.records.steps import GateVerdicts, ModelStep, StepEvent
from stepswitch.steps import StepType
from stepswitch.util.git import discover, run_git
from stepswitch.util.git_tree import TreeGit

CONTINUABLE = ("interrupted", "limit", "error")


# The brief's fields each exploring step answers, and triage's diagnosis (step type values,
# as the records keep them).
ANSWERS = {
    StepType.PLAN.value: "plan",
    StepType.NAVIGATE.value: "files",
    StepType.READ.value: "notes",
    StepType.RUN.value: "observed",
    StepType.TRIAGE.value: "diagnosis",
}


@dataclass(frozen=True)
class Continued:
    record: RunRecord  # the earlier run's
    tip: str  # the last commit on its branch: its work, committed as it ended
    steps: list[StepEvent] = field(default_factory=list)  # its steps.jsonl
    carried: list[str] = field(default_factory=list)  # what its dead process left uncommitted

    @property
    def run_id(self) -> str:
        return self.record.run_id


@dataclass(frozen=True)
class Resume:
    """Where a continued run takes up the earlier one's work."""

    run_id: str  # the earlier run's
    note: str  # what the steps are told of it
    brief: dict[str, str]  # TaskBrief fields its steps answered: not asked for again
    level: int  # the rung it stood on when it stopped


def find_continued(repo: Path, run_id: str) -> Continued:
    """The earlier run `run_id` of `repo`, if it can be continued; else a UsageError saying why."""
    if not valid_run_id(run_id):
        raise UsageError(f"--continue {run_id!r} is no run id (see `ssw runs`)")
    folder = repo / ".ssw" / "runs" / run_id
    if not (folder / "run.json").is_file():
        raise UsageError(f"--continue {run_id}: no such run in {repo} (see `ssw runs`)")
    loaded = load_run(folder)
    carried: list[str] | None = None
    if loaded.run.outcome == "running":  # its process may be gone (kill -9, a crash)
        carried = take_over_abandoned(repo, run_id)
        loaded = load_run(folder)
    record = loaded.run
    if record.outcome not in CONTINUABLE:
        raise UsageError(
            f"--continue {run_id}: it ended {record.outcome}; only a run that ended "
            f"{', '.join(CONTINUABLE)} can be continued"
        )
    checkout = discover(repo)
    if checkout is None:
        raise UsageError(f"{repo} is not the top of a git repository")
    found = run_git(
        checkout.top, "rev-parse", "--verify", "--quiet", f"refs/heads/{record.branch}^{{commit}}",
        git_dir=checkout.common_dir,
    )  # fmt: skip
    tip = found.out.strip()
    if found.status != 0 or not tip:
        raise UsageError(f"--continue {run_id}: its branch {record.branch} is gone")
    if record.commit and tip != record.commit and not carried:
        raise UsageError(
            f"--continue {run_id}: its branch {record.branch} moved after the run "
            f"(at {tip[:12]}, the run committed {record.commit[:12]}); continue from a new run"
        )
    return Continued(record, tip, loaded.steps, carried or [])


def take_over_abandoned(repo: Path, run_id: str) -> list[str]:
    """A run whose record says running: refused while its process lives; else its worktree's
    uncommitted files are committed on its branch (the end a kill took from it) and its record
    marked interrupted. The paths committed."""
    entry = find_run(repo, run_id)
    if entry.outcome != ABANDONED:
        held = f"pid {entry.pid}" if entry.pid else "its lock is held"
        raise UsageError(
            f"--continue {run_id}: it is still running ({held}); wait for it to end or stop it"
        )
    carried: list[str] = []
    worktree = open_worktree(repo, run_id) if entry.worktree is not None else None
    if worktree is not None:
        carried = changed_paths(worktree)
        if carried:
            commit_all(
                worktree,
                f"ssw: the files run {run_id} left uncommitted when its process ended, "
                "committed by `ssw run --continue`",
            )
    if entry.record is not None:
        mark_abandoned_run(entry.record, entry.dollars, found_by="ssw run --continue")
    return carried


def _answered(step: ModelStep) -> str | None:
    """The summary a step's `done` call gave (its output is the summary, as the next step was
    shown it); None if it gave none."""
    for call in step.tool_calls:
        if call.name == "done" and call.ok and not call.refused:
            return call.output.strip() or None
    return None


def resume_point(continued: Continued, changed: list[str], replan: bool) -> Resume:
    """What the continued run is told and keeps of the earlier one: with `replan`, only the
    note; else also each exploring step's last answer, the last diagnosis and failing gates."""
    brief: dict[str, str] = {}
    level = 0
    for event in continued.steps:
        level = event.escalation
        if replan:
            continue
        if isinstance(event, ModelStep):
            name = ANSWERS.get(event.step_type)
            answer = _answered(event)
            if name and answer:
                brief[name] = answer
        elif isinstance(event, GateVerdicts):
            failing = [g.report for g in event.gates if not g.passed and g.report]
            brief["gate_report"] = "\n".join(failing) if not event.passed else ""
    brief = {k: v for k, v in brief.items() if v}
    note = earlier_note(continued, changed)
    return Resume(continued.run_id, note, brief, level)


def restore_earlier_work(tree: TreeGit, tip: str) -> list[str]:
    """Make the work tree (the base commit's files, after the pre-flight) hold `tip`'s files
    instead; the paths that differ from the base commit."""
    root = tree.work_tree
    for child in root.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    tree.check_out(tip)
    return tree.changed_paths()


def earlier_note(continued: Continued, changed: list[str]) -> str:
    """What the new run's steps are told of the earlier one."""
    r = continued.record
    more = f" and {len(changed) - 20} more" if len(changed) > 20 else ""
    files = ", ".join(changed[:20]) + more
    return (
        f"An earlier run of this task ({r.run_id}) ended {r.outcome}: {r.reason}. Its changes "
        f"are already in the tree ({files or 'no file changed'}): check them, keep what is "
        "right, and finish the task."
    )


def resume_notice(resume: Resume, policy: Policy) -> str:
    """The line that says where the continued run takes up the work."""
    kept = [name for name in ("plan", "files", "notes", "observed") if name in resume.brief]
    rung = min(resume.level, len(policy.escalation.ladder) - 1)
    if not kept:
        head = "it plans and explores again"
    else:
        head = f"it keeps the earlier {', '.join(kept)} (--replan asks again)"
    return f"{head}; it starts on rung {rung} ({policy.escalation.ladder[rung]})"


def spent_notice(continued: Continued, ledger: Ledger, limit: float | None) -> str:
    """What the task has spent so far, from the ledger; a UsageError when nothing is left."""
    task_id = continued.record.ids.task_id
    with ledger.transaction() as conn:
        spent = counted(conn, "task", task_id, high=True)
    head = f"continuing run {continued.run_id}: the task has spent up to ${spent:.4f}"
    if limit is None:
        return f"{head} (no budget)"
    if spent >= limit:
        raise UsageError(
            f"--continue {continued.run_id}: the task has spent up to ${spent:.4f} of its "
            f"${limit:g} budget: nothing is left (fix: a larger --budget-usd)"
        )
    return f"{head} of its ${limit:g} budget: ${limit - spent:.4f} left for this run"


def take_up(
    continued: Continued,
    tree: TreeGit,
    replan: bool,
    policy: Policy,
    show: Callable[[str], None],
) -> Resume:
    """`--continue`: the earlier run's change in the tree, and where its steps stopped, said."""
    changed = restore_earlier_work(tree, continued.tip)
    resume = resume_point(continued, changed, replan)
    if continued.carried:
        show(
            f"run {continued.run_id}'s process was gone: its record now says interrupted, and "
            f"what it left uncommitted ({some_paths(continued.carried)}) is committed on its "
            "branch and in this tree"
        )
    show(
        f"continuing run {continued.run_id} ({continued.record.outcome}): its branch's "
        f"change ({len(changed)} files) is in the tree; this run's branch starts after it"
    )
    show(resume_notice(resume, policy))
    return resume
