"""`ssw bench summary`'s table as a user reads it: every header apart, each over its column."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from .test_cli_bench import ssw

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "runs" / "scripted-as-if-ladder.paginate-last-page.k1"
HEADERS = ["contestant", "suite", "runs", "passed", "harness", "$ per run", "tokens/run",
           "uncached", "min/run", "escal.", "refused"]  # fmt: skip


def _cells(line: str) -> list[tuple[str, int]]:
    """The cells of a table line (apart by two spaces or more), each with where it ends."""
    return [(m[0], m.end()) for m in re.finditer(r"\S+(?: \S+)*", line)]


def test_summary_headers_stand_apart_and_each_ends_where_its_column_does(tmp_path: Path):
    shutil.copytree(BENCH, tmp_path / "bench")
    result = ssw("bench", "summary", "bench", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("contestant"))
    heads, cells = _cells(header), _cells(lines[lines.index(header) + 1])
    assert [name for name, _ in heads] == HEADERS, header
    assert len(cells) == len(HEADERS), cells
    # Numbers align right: each number column ends where its header does.
    assert [end for _, end in cells[2:]] == [end for _, end in heads[2:]], (header, cells)
