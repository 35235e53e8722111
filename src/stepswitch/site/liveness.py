"""Whether a run the records call "running" still has its process: a live `ssw run` holds its
run's lock (`.ssw/worktrees/<id>.lock`), which the kernel drops the moment the process dies, so
a killed run is known at once, without waiting for its records to go quiet."""

from __future__ import annotations

from pathlib import Path

from stepswitch.agent.workspace.runs import live_pid
from stepswitch.agent.workspace.worktree import SSW_FOLDER
from stepswitch.site.sources import Source


def _repo_of(folder: Path) -> Path | None:
    """<repo> for a run folder at <repo>/.ssw/runs/<id>; None for a folder anywhere else."""
    runs = folder.parent
    if runs.name != "runs" or runs.parent.name != SSW_FOLDER:
        return None
    return runs.parent.parent


def process_gone(source: Source) -> bool:
    """True when the source's running record is a lone run whose lock no process holds. Bench
    task runs hold no lock, and a copied run folder has no repository: those stay unknown."""
    if source.kind != "run":
        return False
    repo = _repo_of(source.root.absolute())
    records = [r.record for r in source.runs if r.record is not None]
    running = [r for r in records if r.outcome == "running"]
    if repo is None or not running:
        return False
    return all(
        r.worktree == f"{SSW_FOLDER}/worktrees/{r.run_id}" and live_pid(repo, r.run_id) is None
        for r in running
    )
