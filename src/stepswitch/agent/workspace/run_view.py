"""What one run did, from its records and its branch (`ssw runs show`): the task, the policy,
each step, the bill, the gates' and the review's verdicts, and its commit's change against the
commit it started from, and what `ssw runs apply` would refuse. Read only: nothing is written,
and git only reads (apply's checks read the checkout, they change nothing)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepswitch.agent.workspace.apply import apply_refusals
from stepswitch.agent.workspace.runs import RunEntry, find_run
from stepswitch.agent.workspace.spend import LedgerRead
from stepswitch.errors import UsageError
from stepswitch.records.folder import LoadedRun, load_run
from stepswitch.records.steps import GateVerdicts, ModelStep, ReviewVerdicts
from stepswitch.util.git import run_git

# Tree-to-tree, with no program of the repository's configuration in between.
_DIFF = ("diff", "--no-ext-diff", "--no-textconv", "--no-color")


@dataclass(frozen=True)
class RunView:
    entry: RunEntry  # as `ssw runs` lists it: outcome (running, abandoned), dollars, branch
    loaded: LoadedRun
    diff_stat: str | None  # `git diff --stat base commit`; None: no change to show
    diff: str | None = None  # the whole diff, when asked for
    no_diff: str | None = None  # why there is no diff stat
    apply_refused: list[str] | None = None  # what `ssw runs apply` would refuse; [] it would not

    @property
    def gates(self) -> list[GateVerdicts]:
        return self.loaded.of(GateVerdicts)

    @property
    def review(self) -> ReviewVerdicts | None:
        reviews = self.loaded.of(ReviewVerdicts)
        return reviews[-1] if reviews else None

    def as_json(self) -> dict[str, Any]:
        run = self.loaded.run
        review = self.review
        return {
            "id": run.run_id,
            "outcome": self.entry.outcome,
            "reason": run.reason,
            "traceback": run.traceback,
            "scripted": run.scripted,
            "task": run.task,
            "policy": {
                "path": run.policy_path,
                "sha256": run.policy_sha256,
                "as_loaded": run.policy,
            },
            "branch": self.entry.branch,
            "base_commit": run.base_commit or None,
            "commit": run.commit,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "steps": [_step_json(s) for s in self.loaded.model_steps],
            "dollars": None if self.entry.dollars is None else self.entry.dollars.as_json(),
            "dollars_text": None if self.entry.dollars is None else self.entry.dollars.text(),
            "by_worker": {w: c.model_dump() for w, c in sorted(run.totals.by_worker.items())},
            "gates": {
                "verdict": run.gates_verdict,
                "rounds": [
                    {
                        "passed": g.passed,
                        "gates": [{"name": r.name, "passed": r.passed} for r in g.gates],
                    }
                    for g in self.gates
                ],
            },
            "review": None
            if review is None and run.review_verdict is None
            else {
                "verdict": run.review_verdict,
                "second_opinion": None if review is None else review.review.second_opinion,
                "agree": None if review is None else review.review.agree,
            },
            "changed_files": [f.model_dump() for f in run.changed_files],
            "diff_stat": self.diff_stat,
            "no_diff": self.no_diff,
            "diff": self.diff,
            "apply": None
            if self.apply_refused is None
            else {"ok": not self.apply_refused, "would_refuse": self.apply_refused},
        }


def _step_json(s: ModelStep) -> dict[str, Any]:
    return {
        "index": s.step,
        "type": s.step_type,
        "worker": s.worker,
        "provider": s.provider,
        "model": s.model,
        "scripted": s.scripted,
        "outcome": s.outcome,
        "prompt_tokens": s.prompt_tokens,
        "cached_tokens": s.cached_tokens,
        "completion_tokens": s.completion_tokens,
        "dollars": None if s.cost is None else s.cost.model_dump(),
    }


def _has_commit(repo: Path, rev: str) -> bool:
    return run_git(repo, "cat-file", "-e", f"{rev}^{{commit}}").status == 0


def view_run(repo: Path, run_id: str, spend: LedgerRead, with_diff: bool = False) -> RunView:
    """Run `run_id` of `repo` with the change of its commit against its base; a UsageError
    when it has no record to show."""
    entry = find_run(repo, run_id, spend)
    if entry.record is None or entry.problem is not None:
        why = entry.problem or "it has no run.json (killed before its first record?)"
        raise UsageError(f"run {run_id} cannot be shown: {why}")
    loaded = load_run(entry.record)
    run = loaded.run
    no_diff = None
    if run.commit is None:
        no_diff = "no commit (yet)" if entry.outcome == "running" else "the run made no commit"
    elif not run.base_commit:
        no_diff = "its record does not name the commit it started from"
    elif not (_has_commit(repo, run.base_commit) and _has_commit(repo, run.commit)):
        no_diff = f"commit {run.commit[:12]} or its base is not in the repository any more"
    refused = apply_refusals(repo, run_id)
    if no_diff is not None:
        return RunView(entry, loaded, None, no_diff=no_diff, apply_refused=refused)
    assert run.commit is not None
    commits = (run.base_commit, run.commit)
    stat = run_git(repo, *_DIFF, "--stat", *commits)
    if stat.status != 0:
        raise UsageError(f"{repo}: git diff --stat failed: {stat.err}")
    diff = None
    if with_diff:
        full = run_git(repo, *_DIFF, *commits)
        if full.status != 0:
            raise UsageError(f"{repo}: git diff failed: {full.err}")
        diff = full.out
    return RunView(entry, loaded, stat.out or "(no change)", diff=diff, apply_refused=refused)
