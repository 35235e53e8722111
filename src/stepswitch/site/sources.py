"""What the page and the dashboard read. A run folder is what `load_run` reads; a bench run folder
(bench/runs/<id>/) holds run folders under tasks/<task>/<contestant>/<attempt>/ and, once the bench
got that far, results.csv (one row per task run) and summary.json (the paired statistics), read
through the bench's own models (bench/files/). Either file may be missing, or not be what the
bench writes: the page says so and shows the rest; a run folder that does not load is kept with
its problem, never dropped."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stepswitch.bench.files import (
    RESULTS_FILE,
    SUMMARY_FILE,
    BenchFileError,
    ResultRow,
    SummaryFile,
    read_json,
    read_results,
)
from stepswitch.errors import UsageError
from stepswitch.policy.model import MODEL_FLAG
from stepswitch.records.folder import LoadedRun, load_run
from stepswitch.records.links import not_followed
from stepswitch.records.run import RunRecord

RESULTS = RESULTS_FILE
SUMMARY = SUMMARY_FILE
TASKS = "tasks"
MAX_DEPTH = 3  # how far below a named folder run folders are looked for
# Never looked into: a run's own logs and replay page, worktrees, caches.
_SKIP = frozenset({"logs", "replay", "worktrees", "node_modules", "__pycache__", "site"})

Kind = Literal["bench", "run"]


@dataclass(frozen=True)
class ReplayRun:
    """One task run as the page shows it: where it sits in a comparison, and its records."""

    key: str  # its folder relative to the source's root, "/"-separated ("." for a lone run)
    task: str
    contestant: str
    attempt: int
    loaded: LoadedRun | None = None
    problem: str | None = None  # why it cannot be shown (does not load, folder missing)
    result: ResultRow | None = None  # its row of results.csv

    @property
    def record(self) -> RunRecord | None:
        return None if self.loaded is None else self.loaded.run


@dataclass(frozen=True)
class Source:
    """A bench run folder, or one lone run folder."""

    kind: Kind
    name: str
    root: Path
    runs: tuple[ReplayRun, ...]
    bench: dict[str, Any] = field(default_factory=dict)  # the bench's own run.json, as read
    summary: SummaryFile | None = None
    notes: tuple[str, ...] = ()  # what is missing or did not load: said on the page


def is_bench(folder: Path) -> bool:
    return (folder / TASKS).is_dir() or (folder / RESULTS).is_file() or (folder / SUMMARY).is_file()


def locate(
    folder: Path, depth: int = 0, skipped: list[str] | None = None, root: Path | None = None
) -> list[tuple[Kind, Path]]:
    """Bench run folders and lone run folders at or below `folder`, in name order; a folder
    that is a link, or resolves outside `folder`, is not followed (said in `skipped`)."""
    root = folder if root is None else root
    why = not_followed(root, folder)
    if why is not None:
        if skipped is not None:
            skipped.append(why)
        return []
    if is_bench(folder):
        return [("bench", folder)]
    if (folder / "run.json").is_file():
        return [("run", folder)]
    if depth >= MAX_DEPTH:
        return []
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []
    inner = [p for p in children if not p.name.startswith(".") and p.name not in _SKIP]
    if (folder / ".ssw" / "runs").is_dir():  # a repository: its runs
        inner.insert(0, folder / ".ssw" / "runs")
    return [found for child in inner for found in locate(child, depth + 1, skipped, root)]


class RunCache:
    """load_run, remembered while run.json and steps.jsonl stay as they were (the dashboard
    re-reads every few seconds; a finished run's files never change)."""

    def __init__(self) -> None:
        self._runs: dict[Path, tuple[tuple[int, ...], LoadedRun]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _stamp(folder: Path) -> tuple[int, ...]:
        stamp: list[int] = []
        for name in ("run.json", "steps.jsonl"):
            try:
                st = (folder / name).stat()
                stamp += [st.st_mtime_ns, st.st_size]
            except OSError:
                stamp += [-1, -1]
        return tuple(stamp)

    def load(self, folder: Path) -> LoadedRun:
        stamp = self._stamp(folder)
        with self._lock:
            hit = self._runs.get(folder)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        loaded = load_run(folder)
        with self._lock:
            self._runs[folder] = (stamp, loaded)
        return loaded


def _load(folder: Path, cache: RunCache | None) -> tuple[LoadedRun | None, str | None]:
    try:
        return (cache.load(folder) if cache else load_run(folder)), None
    except UsageError as exc:
        return None, str(exc)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # a line that is not JSON, a race
        return None, f"{folder.name}: cannot be read ({exc})"


def contestant_of(run: RunRecord) -> str:
    """A lone run's contestant: its bench contestant, else its policy file's name."""
    if run.ids.contestant:
        return run.ids.contestant
    if run.policy_path.startswith(f"{MODEL_FLAG} "):  # no file: the model it ran, whole
        return run.policy_path.removeprefix(f"{MODEL_FLAG} ")
    return Path(run.policy_path.replace("\\", "/")).name or "run"


def load_lone(folder: Path, cache: RunCache | None = None) -> Source:
    loaded, problem = _load(folder, cache)
    run = None if loaded is None else loaded.run
    replay = ReplayRun(
        key=".",
        task=run.task if run else folder.name,
        contestant=contestant_of(run) if run else "?",
        attempt=run.ids.attempt if run else 0,
        loaded=loaded,
        problem=problem,
    )
    return Source("run", run.run_id if run else folder.name, folder, (replay,))


def _read_results(path: Path, notes: list[str]) -> list[ResultRow]:
    if not path.is_file():
        notes.append(f"no {RESULTS} (the bench did not grade yet, or stopped before)")
        return []
    try:
        return read_results(path)
    except BenchFileError as exc:
        notes.append(f"{RESULTS} cannot be read: {exc}")
        return []


def _read_summary(path: Path, notes: list[str]) -> SummaryFile | None:
    if not path.is_file():
        notes.append(f"no {SUMMARY} (no paired statistics yet)")
        return None
    try:
        return read_json(SummaryFile, path)
    except BenchFileError as exc:
        notes.append(f"{SUMMARY} cannot be read: {exc}")
        return None


def _read_json(path: Path, notes: list[str], missing: str | None) -> dict[str, Any] | None:
    if not path.is_file():
        if missing:
            notes.append(missing)
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        notes.append(f"{path.name} cannot be read as JSON ({exc})")
        return None
    if not isinstance(data, dict):
        notes.append(f"{path.name} is not a JSON object")
        return None
    return data


def _place(root: Path, folder: Path, loaded: LoadedRun | None) -> tuple[str, str, int]:
    """(task, contestant, attempt) from tasks/<task>/<contestant>/<attempt>/, where a task's name
    may hold slashes (suite/task); else from the run's ids."""
    tasks = root / TASKS
    parts = folder.relative_to(tasks).parts if folder.is_relative_to(tasks) else ()
    if len(parts) >= 3 and parts[-1].isdigit():
        return "/".join(parts[:-2]), parts[-2], int(parts[-1])
    if loaded is not None:
        ids = loaded.run.ids
        return ids.task_id, ids.contestant or contestant_of(loaded.run), ids.attempt
    return folder.relative_to(root).as_posix(), "?", 0


def load_bench(root: Path, cache: RunCache | None = None) -> Source:
    notes: list[str] = []
    bench = _read_json(root / "run.json", notes, None) or {}
    summary = _read_summary(root / SUMMARY, notes)
    rows = _read_results(root / RESULTS, notes)
    tasks_dir = root / TASKS
    folders = sorted(p.parent for p in tasks_dir.rglob("run.json")) if tasks_dir.is_dir() else []
    links = [(f, not_followed(root, f)) for f in folders]
    notes += [why for _, why in links if why is not None]
    folders = [f for f, why in links if why is None]
    if not folders:
        notes.append(f"no run folders under {TASKS}/")
    by_place: dict[tuple[str, str, int], ResultRow] = {}
    by_folder: dict[str, ResultRow] = {}
    for row in rows:
        if row.folder:
            by_folder[row.folder.strip("/")] = row
        by_place[(row.task, row.contestant, row.attempt)] = row
    runs: list[ReplayRun] = []
    matched: set[int] = set()
    for folder in folders:
        loaded, problem = _load(folder, cache)
        task, contestant, attempt = _place(root, folder, loaded)
        key = folder.relative_to(root).as_posix()
        found = by_folder.get(key) or by_place.get((task, contestant, attempt))
        if found is not None:
            matched.add(id(found))
        runs.append(ReplayRun(key, task, contestant, attempt, loaded, problem, found))
    for row in rows:  # graded, but its folder is gone: still counted, and said
        if id(row) in matched:
            continue
        task, contestant, attempt = row.task, row.contestant, row.attempt
        key = row.folder or f"{TASKS}/{task}/{contestant}/{attempt}"
        problem = f"{RESULTS} lists this task run, but {key}/ holds no run folder"
        runs.append(ReplayRun(key, task, contestant, attempt, None, problem, row))
    name = str(bench.get("bench_id") or bench.get("id") or root.name)
    return Source("bench", name, root, tuple(runs), bench, summary, tuple(notes))


def load_source(kind: Kind, folder: Path, cache: RunCache | None = None) -> Source:
    return load_bench(folder, cache) if kind == "bench" else load_lone(folder, cache)


def find_sources(paths: list[Path], cache: RunCache | None = None) -> list[Source]:
    """Every bench run and lone run at or below `paths`; a path with none is a UsageError."""
    sources: list[Source] = []
    seen: set[Path] = set()
    for path in paths:
        if not path.is_dir():
            raise UsageError(
                f"{path} is not a folder: name a run folder (.ssw/runs/<id>), a bench run folder "
                "(bench/runs/<id>) or a folder that holds them"
            )
        found = locate(path)
        if not found:
            raise UsageError(
                f"{path} holds no run folder (a folder with run.json) within {MAX_DEPTH} levels"
            )
        for kind, folder in found:
            if folder.resolve() not in seen:  # named twice, or inside another named folder
                seen.add(folder.resolve())
                sources.append(load_source(kind, folder, cache))
    return sources
