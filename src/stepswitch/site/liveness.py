"""Whether a run the records call "running" still has its process: a live `ssw run` holds its
run's lock (`.ssw/worktrees/<id>.lock`), and a live bench task run the owner lock of the scratch
folder its journal line names (`scratch`, util/scratch.py); the kernel drops either the moment
the process dies, so a killed run is known at once, without waiting for its records to go quiet."""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
from pathlib import Path

from stepswitch.agent.workspace.runs import live_pid
from stepswitch.agent.workspace.worktree import SSW_FOLDER
from stepswitch.bench import journal
from stepswitch.site.sources import Source
from stepswitch.util.scratch import BENCH_PREFIX, OWNER


def _repo_of(folder: Path) -> Path | None:
    """<repo> for a run folder at <repo>/.ssw/runs/<id>; None for a folder anywhere else."""
    runs = folder.parent
    if runs.name != "runs" or runs.parent.name != SSW_FOLDER:
        return None
    return runs.parent.parent


def _pid_lives(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return True  # cannot tell: unknown, never "gone"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # there, another user's
    return True


def _owner_gone(scratch: object, pid: object = None) -> bool:
    """True when the bench scratch folder `scratch` (a journal's word: its name in the temporary
    folder, or its whole path in a journal from before names) has no owner file, or one nobody
    holds (taken without waiting, let go at once). Anything else is unknown: False."""
    if not isinstance(scratch, str):
        return False  # a journal from before `scratch` was written
    folder = Path(scratch)
    if len(folder.parts) == 1:  # a name: the journal names no machine path (ADR 0026)
        folder = Path(tempfile.gettempdir()) / folder
        if not folder.exists():  # cleaned, or made under another $TMPDIR: ask the process
            return not _pid_lives(pid)
    if not folder.is_absolute() or not folder.name.startswith(BENCH_PREFIX):
        return False
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(folder / OWNER, flags)
    except FileNotFoundError:
        return True  # removed: the run ended, or `ssw runs clean` took what it left
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held (its process lives), or a file system without flock
        return False
    finally:
        os.close(fd)  # lets go of the lock, if it was taken
    return True


def _bench_gone(source: Source, running: list[str]) -> bool:
    opened = {
        e.get("run_id"): e for e in journal.read(source.root / journal.JOURNAL).open_runs.values()
    }
    return all(
        r in opened and _owner_gone(opened[r].get("scratch"), opened[r].get("pid")) for r in running
    )


def process_gone(source: Source) -> bool:
    """True when every running record of the source has lost its process: a lone run whose lock
    no process holds, a bench task run whose scratch folder's owner lock nobody holds. A copied
    run folder has no repository, a bench journal from before `scratch`: those stay unknown."""
    if source.kind == "bench":
        run_ids = [
            r.record.run_id
            for r in source.runs
            if r.record is not None and r.record.outcome == "running"
        ]
        return bool(run_ids) and _bench_gone(source, run_ids)
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
