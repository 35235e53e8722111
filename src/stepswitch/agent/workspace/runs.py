"""The runs a repository holds (records in .ssw/runs/, worktrees in .ssw/worktrees/, branches
ssw/<id>) and cleaning up after those that finished or whose ssw process is gone (kill -9, a
crash, a power cut). Cleaning never loses work: a worktree with uncommitted changes, or a branch
with commits on no other branch, stays unless forced."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stepswitch.agent.workspace.spend import UNREAD, LedgerRead, ledger_of, read_spend
from stepswitch.agent.workspace.worktree import (
    SSW_FOLDER,
    changed_paths,
    lock_path,
    open_worktree,
    some_paths,
    state_path,
)
from stepswitch.errors import SswError, UsageError
from stepswitch.records.abandoned import mark_abandoned_run
from stepswitch.records.dollars import RunDollars
from stepswitch.records.links import not_followed
from stepswitch.records.money import CostRange
from stepswitch.records.run import RunRecord
from stepswitch.util.git import run_git

BRANCH_PREFIX = "ssw/"
ABANDONED = "abandoned"  # the record says running, and no process holds the run's lock
NO_RECORD = "no record"  # a branch or worktree with no run.json beside it
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def valid_run_id(run_id: str) -> bool:
    """A name a run folder and branch can have: no path separator, no leading dot or dash."""
    return _SAFE_ID.fullmatch(run_id) is not None


@dataclass(frozen=True)
class RunEntry:
    run_id: str
    outcome: str  # the record's outcome, "running" (its process lives), ABANDONED or NO_RECORD
    dollars: RunDollars | None = None  # the record's dollars beside the ledger's rows
    branch: str | None = None  # ssw/<id>, while it exists
    worktree: Path | None = None  # .ssw/worktrees/<id>, while it exists
    record: Path | None = None  # the run folder, when it has run.json
    pid: int | None = None  # the live process
    started_at: str | None = None
    problem: str | None = None  # why the record does not load, or is not followed
    scripted: bool = False  # its replies came from a script, not from a model

    @property
    def cost(self) -> CostRange | None:
        """Every dollar the run is known to have spent: the ledger's range when it says more."""
        return None if self.dollars is None else self.dollars.cost

    def as_json(self, repo: Path) -> dict[str, Any]:
        return {
            "id": self.run_id,
            "outcome": self.outcome,
            "scripted": self.scripted,
            "dollars": None if self.cost is None else self.cost.model_dump(),
            "dollars_detail": None if self.dollars is None else self.dollars.as_json(),
            "branch": self.branch,
            "worktree": self.worktree is not None,
            "started_at": self.started_at,
            "pid": self.pid,
            "record": None if self.record is None else self.record.relative_to(repo).as_posix(),
            "problem": self.problem,
        }


@dataclass
class Cleaned:
    run_id: str
    removed: list[str] = field(default_factory=list)  # "worktree .ssw/worktrees/x", "branch ..."
    kept: list[str] = field(default_factory=list)  # why something stayed, with the way out


def _git(repo: Path, *args: str, check: bool = True) -> tuple[int, str]:
    done = run_git(repo, *args)
    if check and done.status != 0:
        raise UsageError(f"{repo}: git {' '.join(args[:2])} failed: {done.err}")
    return done.status, done.out


def repo_top(path: Path) -> Path:
    """The top of the git checkout `path` is in; a UsageError when it is in none."""
    if not path.is_dir():
        raise UsageError(f"{path} is not a folder")
    status, out = _git(path, "rev-parse", "--show-toplevel", check=False)
    if status != 0 or not out.strip():
        raise UsageError(f"{path} is not in a git repository (fix: pass --repo PATH)")
    top = Path(out.strip()).resolve()
    parts = top.parts
    for i in range(len(parts) - 1):
        if parts[i : i + 2] == (SSW_FOLDER, "worktrees"):
            # A run's work tree holds no git folder: one found there was planted by its model.
            raise UsageError(
                f"{path} is inside a run's work tree; run ssw from the checkout "
                f"(fix: --repo {Path(*parts[:i])})"
            )
    return top


def live_pid(repo: Path, run_id: str) -> int | None:
    """The pid of the process running `run_id` (it holds the run's lock), else None."""
    lock = lock_path(repo, run_id)
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 64).decode(errors="replace").strip()
            return int(text) if text.isdigit() else 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _branches(repo: Path) -> set[str]:
    _, out = _git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/ssw/")
    return {line for line in out.splitlines() if line.startswith(BRANCH_PREFIX)}


def _ids(repo: Path, branches: set[str]) -> list[str]:
    ssw = repo / SSW_FOLDER
    found = {b.removeprefix(BRANCH_PREFIX) for b in branches}
    if (ssw / "runs").is_dir():  # a link is listed (and not followed) so that it is said
        found |= {p.name for p in (ssw / "runs").iterdir() if p.is_dir() or p.is_symlink()}
    if (ssw / "worktrees").is_dir():
        found |= {p.name.removesuffix(".lock") for p in (ssw / "worktrees").iterdir()}
    return sorted(i for i in found if valid_run_id(i))


def _read_record(folder: Path) -> RunRecord:
    """run.json alone (a listing need not parse every step); version 1 through load_run."""
    from pydantic import ValidationError

    from stepswitch.records.folder import load_run
    from stepswitch.util.config_model import first_error

    path = folder / "run.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it as JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("schema_version", 1) == 1:
        return load_run(folder).run
    try:
        return RunRecord.read(data)
    except ValidationError as exc:
        raise UsageError(f"{path}: does not load: {first_error(exc)['msg']}") from exc


def _steps_so_far(folder: Path) -> CostRange | None:
    """What the steps recorded so far cost: run.json gets its totals only at the run's end."""
    from stepswitch.records.folder import load_run

    try:
        steps = load_run(folder).model_steps
    except (SswError, OSError, ValueError):
        return None
    return sum((s.cost or CostRange() for s in steps), CostRange()) if steps else None


def _entry(repo: Path, run_id: str, branches: set[str], spend: LedgerRead) -> RunEntry:
    runs = repo / SSW_FOLDER / "runs"
    folder = runs / run_id
    worktree = repo / SSW_FOLDER / "worktrees" / run_id
    branch = BRANCH_PREFIX + run_id
    base = RunEntry(
        run_id=run_id,
        outcome=NO_RECORD,
        branch=branch if branch in branches else None,
        worktree=worktree if worktree.is_dir() else None,
        pid=live_pid(repo, run_id),
    )
    if base.pid is not None:
        base = replace(base, outcome="running")
    skipped = not_followed(runs, folder) if folder.exists() or folder.is_symlink() else None
    if skipped is not None:
        return replace(base, problem=f"{SSW_FOLDER}/runs/{skipped}")
    if not (folder / "run.json").is_file():
        if base.pid is None and (base.worktree or lock_path(repo, run_id).exists()):
            base = replace(base, outcome=ABANDONED)  # killed before its first record
        return base
    try:
        record = _read_record(folder)
    except UsageError as exc:
        return replace(base, record=folder, problem=str(exc))
    ours = record.worktree == f"{SSW_FOLDER}/worktrees/{run_id}"
    outcome: str = record.outcome
    if base.pid is not None:
        outcome = "running"
    elif outcome == "running" and ours:
        outcome = ABANDONED
    so_far = _steps_so_far(folder) if record.outcome == "running" else None
    return replace(
        base,
        outcome=outcome,
        dollars=spend.dollars(record, so_far),
        record=folder,
        started_at=record.started_at,
        scripted=record.scripted,
    )


def list_runs(repo: Path, spend: LedgerRead | None = None) -> list[RunEntry]:
    """Every run `repo` has a record, a worktree or a branch of, oldest first (ids sort by time),
    with its dollars beside the ledger's rows (`spend`; default: the ledger `ssw run` writes)."""
    branches = _branches(repo)
    spend = read_spend(ledger_of(repo)) if spend is None else spend
    return [_entry(repo, run_id, branches, spend) for run_id in _ids(repo, branches)]


def find_run(repo: Path, run_id: str, spend: LedgerRead | None = None) -> RunEntry:
    """The run `run_id` of `repo`, as `ssw runs` lists it; a UsageError when there is none."""
    for entry in list_runs(repo, spend):
        if entry.run_id == run_id:
            return entry
    raise UsageError(f"no run {run_id!r} in {repo} (fix: `ssw runs` lists them)")


def abandoned_notice(repo: Path) -> str | None:
    """The line the next `ssw run` prints when earlier runs were left behind; never raises."""
    try:
        left = [e.run_id for e in list_runs(repo, UNREAD) if e.outcome == ABANDONED]
    except (SswError, OSError):
        return None
    if not left:
        return None
    shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
    return (
        f"note: {len(left)} earlier run(s) ended without finishing (their ssw process is gone): "
        f"{shown}; `ssw runs` lists them, `ssw runs clean --all` removes their worktrees and "
        "branches"
    )


# --- cleaning ---


def unrecorded_commits(repo: Path, branch: str) -> list[str]:
    """Subjects of the commits on `branch` that change something and are on no other branch,
    tag or remote branch, nor applied to HEAD as the same patch (a squash or a cherry-pick)."""
    name = branch.removeprefix("refs/heads/")
    _, out = _git(
        repo, "rev-list", name, "--not", f"--exclude={name}", "--branches", "--tags", "--remotes"
    )
    unique = out.split()
    if not unique:
        return []
    _, cherry = _git(repo, "cherry", "HEAD", name, check=False)
    applied = {line[2:] for line in cherry.splitlines() if line.startswith("- ")}
    subjects = []
    for commit in unique:
        if commit in applied:
            continue
        changed, _ = _git(repo, "diff-tree", "--quiet", "--root", "-r", commit, check=False)
        if changed:  # exit 1: the commit changes files; an empty ssw commit holds no work
            _, subject = _git(repo, "log", "-1", "--format=%s", commit)
            subjects.append(subject.strip())
    return subjects


def worktree_changes(repo: Path, run_id: str) -> list[str]:
    """What a run's work tree holds that its branch's last commit has not."""
    worktree = open_worktree(repo, run_id)
    if worktree is None:
        return ["(its branch is gone: nothing to compare it with)"]
    return changed_paths(worktree)


def _remove_worktree(repo: Path, path: Path) -> None:
    """A run's folders, only ours under .ssw; a worktree made by an older ssw with `git
    worktree add` has its entry in git's folder dropped too."""
    assert path.parent == repo / SSW_FOLDER / "worktrees"
    shutil.rmtree(path, ignore_errors=True)  # never follows a link out
    shutil.rmtree(state_path(repo, path.name), ignore_errors=True)
    _forget_worktree(repo, path)


def _forget_worktree(repo: Path, path: Path) -> None:
    """Drop git's entry for a worktree folder that is gone (else its branch cannot be deleted);
    unlike `git worktree prune`, no other worktree's entry is touched."""
    if path.exists():
        return
    _, common = _git(repo, "rev-parse", "--git-common-dir")
    admin = (repo / common.strip() / "worktrees").resolve()
    if not admin.is_dir():
        return
    for entry in admin.iterdir():
        gitdir = entry / "gitdir"
        try:
            points_to = Path(gitdir.read_text(encoding="utf-8").strip())
        except OSError:
            continue
        if points_to.resolve() == (path / ".git").resolve():
            shutil.rmtree(entry)


def _some(items: list[str]) -> str:
    return ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")


def clean_run(repo: Path, entry: RunEntry, force: bool = False) -> Cleaned:
    """Remove a finished or abandoned run's worktree and branch; its record stays."""
    done = Cleaned(entry.run_id)
    if entry.outcome == "running":
        if entry.pid is None:
            why = "not made by `ssw run`: whether its process lives is unknown"
        else:
            why = f"pid {entry.pid}" if entry.pid > 0 else "its lock is held"
        done.kept.append(f"still running ({why})")
        return done
    worktree_kept = False
    if entry.worktree is not None:
        rel = entry.worktree.relative_to(repo).as_posix()
        try:
            dirty = worktree_changes(repo, entry.run_id)
        except (UsageError, OSError):
            dirty = ["(git cannot read it)"]
        if entry.record is None and _only_missing(entry.worktree, dirty):
            dirty = []  # killed while ssw wrote the base commit's files: no one's work is there
        if dirty and not force:
            worktree_kept = True
            done.kept.append(
                f"worktree {rel} has uncommitted changes ({some_paths(dirty)}): copy what you "
                f"need out of {entry.worktree}, or pass --force to drop them"
            )
        else:
            _remove_worktree(repo, entry.worktree)
            done.removed.append(f"worktree {rel}")
    if not worktree_kept:
        lock_path(repo, entry.run_id).unlink(missing_ok=True)
        _forget_worktree(repo, repo / SSW_FOLDER / "worktrees" / entry.run_id)
    if entry.branch is not None and not worktree_kept:
        work = [] if force else unrecorded_commits(repo, entry.branch)
        if work:
            done.kept.append(
                f"branch {entry.branch} has {len(work)} commit(s) on no other branch "
                f"({_some([repr(s) for s in work])}): merge or push it, or pass --force to "
                "delete it"
            )
        else:
            status, _ = _git(repo, "branch", "-D", entry.branch, check=False)
            if status == 0:
                done.removed.append(f"branch {entry.branch}")
            else:
                done.kept.append(f"branch {entry.branch}: git would not delete it (checked out?)")
    if entry.outcome == ABANDONED and entry.record is not None:
        try:
            mark_abandoned_run(entry.record, entry.dollars)
        except OSError as exc:  # a full disk: the record stays as it was, said so
            done.kept.append(f"its 'running' mark: run.json cannot be written ({exc.strerror})")
        else:
            done.removed.append("its 'running' mark (the record now says interrupted)")
    return done


def _only_missing(worktree: Path, changed: list[str]) -> bool:
    """Every change is a base commit's file not there (yet): a checkout cut short, which a run
    with no record (stopped before its first step) leaves; nothing in it was added or edited."""
    return bool(changed) and all(not os.path.lexists(worktree / rel) for rel in changed)


def has_debris(entry: RunEntry) -> bool:
    return entry.worktree is not None or entry.branch is not None or entry.outcome == ABANDONED


def clean_runs(
    repo: Path, run_id: str | None, force: bool = False, spend: LedgerRead | None = None
) -> list[Cleaned]:
    """Clean one run (by id) or, with run_id None, every finished or abandoned one."""
    if run_id is not None:
        chosen = [find_run(repo, run_id, spend)]
    else:
        chosen = [e for e in list_runs(repo, spend) if e.outcome != "running" and has_debris(e)]
    return [clean_run(repo, entry, force) for entry in chosen]
