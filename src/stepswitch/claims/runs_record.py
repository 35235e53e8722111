"""docs/runs/, hashed as evidence is (ADR 0077): the recorded runs the replay page and the
README's screenshot are built from. `ssw prove` writes claims/docs-runs.json, the sha256 of each
file of each run folder and a short hash of each of its lines; `ssw prove --check` fails on a
file it does not name, a file whose bytes differ (naming the first line that does), and a file
it names that is gone. Changing a run is a commit that changes the record too, for review."""

from __future__ import annotations

import json
from pathlib import Path

from stepswitch.util.hashing import sha256_bytes, tree_files

RUNS = "docs/runs"
RECORD = "claims/docs-runs.json"
LINE_HASH = 12  # hex digits of each line's sha256: enough to find the line that changed


def runs_files(root: Path) -> dict[str, bytes]:
    """Every file in a run folder under docs/runs (its README aside), by path from the root."""
    folder = root / RUNS
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in tree_files(folder)
        if p.parent != folder
    }


def _lines(data: bytes) -> list[str]:
    return [sha256_bytes(line)[:LINE_HASH] for line in data.split(b"\n")]


def record_text(files: dict[str, bytes]) -> str:
    record = {
        "about": f"sha256 of each file of each run under {RUNS}/ (ADR 0077), written by ssw prove",
        "files": {
            rel: {"sha256": sha256_bytes(data), "lines": _lines(data)}
            for rel, data in sorted(files.items())
        },
    }
    return json.dumps(record, indent=1) + "\n"


def _recorded(root: Path) -> tuple[dict[str, dict[str, object]], str] | None:
    try:
        text = (root / RECORD).read_text(encoding="utf-8")
        files = json.loads(text)["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (files, text) if isinstance(files, dict) else None


def runs_problems(root: Path, files: dict[str, bytes]) -> list[str]:
    """What in docs/runs the record does not name as it is (problem lines, file and line)."""
    recorded = _recorded(root)
    if recorded is None:
        if not files:
            return []
        return [f"{RECORD} is missing or unreadable, and {RUNS} holds runs: run ssw prove"]
    named, text = recorded
    fix = f"a changed run is re-recorded by ssw prove, and the change to {RECORD} reviewed"
    problems = []
    for rel, data in sorted(files.items()):
        entry = named.get(rel)
        if not isinstance(entry, dict):
            problems.append(f"{rel}:1: {RECORD} does not name it ({fix})")
            continue
        if entry.get("sha256") == sha256_bytes(data):
            continue
        was = entry.get("lines")
        now = _lines(data)
        old = was if isinstance(was, list) else []
        line = next((i for i, (a, b) in enumerate(zip(old, now, strict=False)) if a != b), None)
        line = min(len(old), len(now)) if line is None else line
        problems.append(f"{rel}:{line + 1}: differs from what {RECORD} names ({fix})")
    for rel in sorted(set(named) - set(files)):
        at = text.count("\n", 0, text.find(json.dumps(rel))) + 1
        problems.append(f"{RECORD}:{at}: names {rel}, which is gone ({fix})")
    return problems


__all__ = ["RECORD", "RUNS", "record_text", "runs_files", "runs_problems"]
