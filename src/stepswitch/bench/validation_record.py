"""The record of a whole `ssw bench validate` (`--out FILE`, `--json`): when it started, on which
commit, with which ssw, and per task its folder's sha256, its checks and its verdict
(files.ValidationRecord)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stepswitch.bench.files import VALIDATE_KIND, TaskEntry, ValidationRecord
from stepswitch.bench.task import Task
from stepswitch.bench.validation_result import CHECKS, TaskValidation
from stepswitch.bench.verdict import TestVerdict
from stepswitch.util.hashing import folder_hashes, hash_path

RECORD_SCHEMA = 1


# TestVerdict's fields a record keeps as they are, in its order (bench/files/records.py).
_KEPT = ("exit_status", "report", "tests", "failures", "errors", "skipped", "timed_out")


def _verdict(verdict: TestVerdict) -> dict[str, object]:
    return {
        **{name: getattr(verdict, name) for name in _KEPT},
        "failing": list(verdict.failing),
        "summary": verdict.summary(),
        "duration_s": round(verdict.duration_s, 3),
    }


def task_sha256(task: Task) -> str:
    """The task folder's sha256 as the claims engine hashes a folder (util/hashing.py): its
    committed files' relative paths and sha256s, caches skipped."""
    return hash_path(task.folder, ".")


def task_sha256s(tasks: Sequence[Task]) -> list[str]:
    """`task_sha256` of each task, with one git call per suite instead of one per task."""
    return folder_hashes([task.folder for task in tasks])


def task_entry(task: Task, result: TaskValidation, sha256: str | None = None) -> dict[str, object]:
    """One task's part of the record (files.TaskEntry, as JSON data); `sha256` is its folder's
    hash taken before it was validated (default: now)."""
    entry = {
        "task": result.task,
        "suite": task.suite,
        "id": task.spec.id,
        "sha256": sha256 or task_sha256(task),
        "valid": result.valid,
        "problem": result.problem,
        "checks": [
            {"check": c.name, "ok": c.ok, "found": c.found, "warning": c.warning}
            for c in result.checks
        ],
        "not_run": [name for name in CHECKS if name not in {c.name for c in result.checks}],
        "start": _verdict(result.start) if result.start is not None else None,
        "reference": [_verdict(v) for v in result.reference],
        "duration_s": round(result.duration_s, 3),
    }
    return TaskEntry.model_validate(entry).model_dump(mode="json")


def validation_record(
    tasks: Sequence[Task],
    entries: Sequence[dict[str, object]],
    *,
    started_at: str,
    source: tuple[str | None, bool | None],
    finished_at: str,
    duration_s: float,
    command: Sequence[str],
    jobs: int,
    sandbox: str | None = None,
) -> dict[str, object]:
    """The whole validation: when, by which code, on which tasks (by sha256), and each verdict.
    `started_at` lets the claims engine refuse a validation made before a claim's registration;
    `source` is `record.source_commit()` taken then (the commit and whether the tree had
    changes), not at the end, when the checkout may have moved on. It is files.ValidationRecord,
    as JSON data."""
    from stepswitch import __version__
    from stepswitch.bench.record import relative_path, versions

    commit, dirty = source
    suites: dict[str, dict[str, object]] = {}
    for task in tasks:
        suite = suites.setdefault(
            task.suite,
            {
                "name": task.suite,
                "path": relative_path(task.folder.parent, Path.cwd()),
                "tasks": [],
            },
        )
        ids = suite["tasks"]
        assert isinstance(ids, list)
        ids.append(task.spec.id)
    valid = sum(bool(e["valid"]) for e in entries)
    record = {
        "schema_version": RECORD_SCHEMA,
        "kind": VALIDATE_KIND,
        "tool": {"name": "stepswitch", "version": __version__},
        "command": list(command),
        "commit": commit,
        "dirty": dirty,
        "versions": versions(),
        "jobs": jobs,
        "sandbox": sandbox,
        "started_at": started_at,
        "finished_at": finished_at,
        "duration_s": round(duration_s, 1),
        "checks": dict(CHECKS),
        "suites": list(suites.values()),
        "totals": {"tasks": len(entries), "valid": valid, "invalid": len(entries) - valid},
        "tasks": list(entries),
    }
    return ValidationRecord.model_validate(record).model_dump(mode="json")
