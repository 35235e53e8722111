"""The bench folder's journal: one JSON line per task run started, finished or released, each
written with one `write` on an O_APPEND descriptor and fsynced before the run goes on, so
workers in several processes can share it and a kill -9 loses at most a line being written
(a torn last line is skipped when read).

    {"event": "started", "task": "general/csv-quoting", "contestant": "oracle", "attempt": 0,
     "run_id": "...", "pid": 4242, "at": "2026-12-01T09:00:00+00:00"}
    {"event": "finished", ..., "row": {<ResultRow>}}
    {"event": "released", ..., "why": "stopped before its first model call"}

`finished` is final: resume keeps it. `released` means the run may start again (it never
called a model). A run started and neither finished nor released is what resume decides on.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stepswitch.bench.plan import RunKey
from stepswitch.bench.results import ResultRow

JOURNAL = "journal.jsonl"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def append(path: Path, event: str, key: RunKey, **fields: Any) -> None:
    line = json.dumps({"event": event, **key.as_dict(), **fields, "at": now()}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def finish(path: Path, row: ResultRow) -> None:
    append(path, "finished", row.key, row=row.model_dump(mode="json"))


@dataclass
class JournalState:
    finished: dict[RunKey, ResultRow] = field(default_factory=dict)
    open_runs: dict[RunKey, dict[str, Any]] = field(default_factory=dict)  # the last `started`
    starts: dict[RunKey, int] = field(default_factory=dict)  # how often each run started


def read(path: Path) -> JournalState:
    state = JournalState()
    if not path.exists():
        return state
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            key = RunKey(str(entry["task"]), str(entry["contestant"]), int(entry["attempt"]))
            event = entry["event"]
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            continue  # a line torn by a kill mid-write: skipped
        if key in state.finished:
            continue  # final: nothing after it changes the run
        if event == "started":
            state.open_runs[key] = entry
            state.starts[key] = state.starts.get(key, 0) + 1
        elif event == "released":
            state.open_runs.pop(key, None)
        elif event == "finished":
            try:
                state.finished[key] = ResultRow.model_validate(entry["row"])
            except (KeyError, ValidationError):
                continue
            state.open_runs.pop(key, None)
    return state
