"""A bench folder's run.json: what was compared, with what, by which code, and how it went.

It records the command, the commit and versions, each contestant's policy (as loaded, with its
hash) and the registry's list prices for every model they use, the suites with a hash of each
task folder, the claims the bench was run for (`ssw bench run --claim ID`: only those claims may
use it as evidence), and one entry per session (a resume is a new session of the same bench). A
resume must be the same bench: same suites and tasks, same contestants and policies, same runs
per task, same claims. Its model is `BenchRecord`, in bench/files/.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stepswitch import __version__
from stepswitch.agent.run import policy_sha256
from stepswitch.agent.workers import worker_models
from stepswitch.bench.contestants import LABELS, Contestant
from stepswitch.bench.files import RUN_FILE, BenchRecord, ContestantRecord, Session, SuiteRecord
from stepswitch.bench.task import Task
from stepswitch.errors import UsageError
from stepswitch.registry.presets import Price, ProviderSpec, load_registry
from stepswitch.util.git import git_answer
from stepswitch.util.source_state import source_state
from stepswitch.util.text import escape_json_controls

if TYPE_CHECKING:
    from stepswitch.bench.runner import BenchSpec

SCHEMA_VERSION = 1


def source_commit() -> tuple[str | None, bool | None]:
    """The commit of the repository ssw runs from, and whether the code it runs is that
    commit's (util/source_state.py: the one rule every producer of evidence asks)."""
    top = git_answer(Path(__file__).resolve().parent, "rev-parse", "--show-toplevel")
    if top is None:
        return None, None
    state = source_state(Path(top))
    return state.commit, state.dirty


def versions() -> dict[str, str]:
    import pydantic

    found = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pydantic": pydantic.VERSION,
        "git": (git_answer(Path.cwd(), "--version") or "?").removeprefix("git version "),
    }
    try:
        import pytest

        found["pytest"] = pytest.__version__
    except ImportError:  # pragma: no cover - the graders' pytest is ssw's own
        found["pytest"] = "missing"
    found["executable"] = Path(sys.executable).name
    return found


def folder_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def relative_path(path: Path, root: Path) -> str:
    """`path` relative to the working folder when inside it (bench/suites/general), else to
    the bench folder `root`: never a machine's absolute path."""
    real = path.resolve()
    try:
        return real.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return Path(os.path.relpath(real, root.resolve())).as_posix()


def suite_records(tasks: Sequence[Task], root: Path) -> list[SuiteRecord]:
    by_suite: dict[str, list[Task]] = {}
    for task in tasks:
        by_suite.setdefault(task.suite, []).append(task)
    records = []
    for name, members in by_suite.items():
        digest = hashlib.sha256()
        for task in members:
            digest.update(f"{task.spec.id}:{folder_sha256(task.folder)}\n".encode())
        records.append(
            SuiteRecord(
                name=name,
                path=relative_path(members[0].folder.parent, root),
                tasks=[t.spec.id for t in members],
                sha256=digest.hexdigest(),
            )
        )
    return records


def contestant_records(
    contestants: Sequence[Contestant], registry: dict[str, ProviderSpec]
) -> tuple[list[ContestantRecord], dict[str, dict[str, Any] | None]]:
    records, prices = [], {}
    for c in contestants:
        policy = c.load_policy()
        for name, model in worker_models(policy, registry).items():
            worker = policy.workers[name]
            price = model.price.model_dump(mode="json") if isinstance(model.price, Price) else None
            prices[f"{worker.provider}/{worker.model}"] = price
        records.append(
            ContestantRecord(
                name=c.name,
                kind=c.kind,
                label=LABELS["simulated"] if getattr(c, "population", None) else LABELS[c.kind],
                policy_path=c.policy_path,
                policy_sha256=policy_sha256(policy),
                policy=policy.model_dump(mode="json"),
                script=getattr(c, "script", None),
                population=getattr(c, "population", None),
            )
        )
    return records, prices


def check_same_bench(old: BenchRecord, new: BenchRecord, folder: Path) -> None:
    a, b = old.identity(), new.identity()
    differs = [k for k in a if a[k] != b[k]]
    if differs:
        raise UsageError(
            f"{folder} holds another bench ({', '.join(differs)} differ): resume it with the "
            "command in its run.json, or pass another --out"
        )


__all__ = [
    "RUN_FILE",
    "BenchRecord",
    "ContestantRecord",
    "Session",
    "SuiteRecord",
    "check_same_bench",
    "contestant_records",
    "folder_sha256",
    "relative_path",
    "source_commit",
    "suite_records",
    "versions",
]


def _new_record(spec: BenchSpec, root: Path, planned: int, session: Session) -> BenchRecord:
    registry = load_registry()
    contestants, prices = contestant_records(spec.contestants, registry)
    commit, dirty = source_commit()
    return BenchRecord(
        bench_id=root.name,
        command=list(spec.command),
        ssw_version=__version__,
        commit=commit,
        dirty=dirty,
        versions=versions(),
        suites=suite_records(spec.tasks, root),
        contestants=contestants,
        prices=prices,
        runs_per_task=spec.runs_per_task,
        planned=planned,
        sandbox=spec.sandbox,
        started_at=session.started_at,
        sessions=[session],
        claims=list(dict.fromkeys(spec.claims)),
    )


def write_json(path: Path, data: str) -> None:
    staged = path.with_suffix(".json.tmp")
    staged.write_text(escape_json_controls(data), encoding="utf-8")
    staged.replace(path)


def open_record(spec: BenchSpec, root: Path, planned: int, session: Session) -> BenchRecord:
    fresh = _new_record(spec, root, planned, session)
    path = root / RUN_FILE
    if not path.exists():
        return fresh
    try:
        old = BenchRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UsageError(f"{path}: not a bench's run.json ({exc}); pass another --out") from exc
    check_same_bench(old, fresh, root)
    for earlier in old.sessions:
        # This process holds the folder's lock: a session still `running` is one that died
        # (kill -9, a crash) before it could record its end. When it ended is unknown.
        if earlier.status == "running":
            earlier.status = "interrupted"
    old.sessions.append(session)
    old.status, old.finished_at = "running", None
    return old
