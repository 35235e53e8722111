"""Measured notes: the figures a record may keep, as history (ADR 0077).

A decision record (docs/decisions/) and a bench's README (bench/) record what was measured when
it was decided or run. Their figures stay only inside a note that names the day and the commit
they were measured at:

    <!-- measured 2026-12-02 at 4701576 -->
    ssw 5.9 ms per step against mini-swe-agent's 14.6 ...
    <!-- /measured -->

and the lint checks, where git can tell (a checkout with its whole history): the commit is in
the history, it was committed on that day, and every figure in the note was already in the file
at that commit. So a note keeps history as it was written and cannot take a figure typed later;
a note in any other file (the README, a page) blesses nothing. Outside a note, a record is
linted as a page is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from stepswitch.claims.git_view import GitView
from stepswitch.claims.model import NUMBER
from stepswitch.util.git import git_answer

NOTE = re.compile(
    r"<!-- measured (?P<date>\d{4}-\d{2}-\d{2}) at (?P<commit>[0-9a-f]{7,40}) -->"
    r"(?P<body>.*?)<!-- /measured -->",
    re.DOTALL,
)
OPENER = re.compile(r"<!--\s*/?measured\b[^>]*-->")
RECORD_PREFIXES = ("docs/decisions/", "bench/")


@dataclass(frozen=True)
class Note:
    start: int
    end: int
    body: tuple[int, int]
    date: str
    commit: str


def is_record(rel: str) -> bool:
    """Whether `rel` may keep measured notes: a decision record or a bench's Markdown file."""
    return rel.startswith(RECORD_PREFIXES)


def notes(text: str) -> list[Note]:
    return [
        Note(m.start(), m.end(), m.span("body"), m.group("date"), m.group("commit"))
        for m in NOTE.finditer(text)
    ]


def stray_markers(text: str) -> Iterator[int]:
    """Offsets of note comments that open or close no well-formed note."""
    inside = [(n.start, n.end) for n in notes(text)]
    for m in OPENER.finditer(text):
        if not any(start <= m.start() < end for start, end in inside):
            yield m.start()


@functools.lru_cache(maxsize=512)
def _file_at(root: Path, commit: str, rel: str) -> str | None:
    return git_answer(root, "show", f"{commit}:./{rel}")


def note_problems(git: GitView | None, rel: str, text: str, note: Note) -> list[str]:
    """Why a note does not hold history git can show; [] when it does or git cannot tell."""
    if git is None:
        return []
    exists = git.exists(note.commit)
    if exists is None:
        return []
    if not exists:
        return [f"the measured note names commit {note.commit}, which is not in the history"]
    when = git.committed_at(note.commit)
    if when is not None and when.date().isoformat() != note.date:
        return [
            f"the measured note says {note.date}, but commit {note.commit} was made on "
            f"{when.date().isoformat()}"
        ]
    then = _file_at(git.root, note.commit, rel)
    if then is None:
        return [f"the measured note names commit {note.commit}, where {rel} does not exist"]
    held = {m.group().rstrip(".,") for m in NUMBER.finditer(then)}
    body = text[note.body[0] : note.body[1]]
    later = sorted(
        {m.group().rstrip(".,") for m in NUMBER.finditer(body)} - held,
        key=body.find,
    )
    if later:
        shown = ", ".join(repr(n) for n in later[:3]) + (" ..." if len(later) > 3 else "")
        return [
            f"the measured note holds {shown}, which {rel} did not hold at commit "
            f"{note.commit}: a note keeps figures as they were measured"
        ]
    return []


__all__ = ["NOTE", "Note", "is_record", "note_problems", "notes", "stray_markers"]
