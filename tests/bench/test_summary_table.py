"""`ssw bench summary`'s table as a user reads it: every header apart, each over its column."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from stepswitch.bench.files.results import ResultRow
from stepswitch.bench.summary import group_stats

from .test_cli_bench import ssw

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "runs" / "scripted-as-if-ladder.paginate-last-page.k1"
HEADERS = ["contestant", "suite", "runs", "passed", "harness", "$ per run", "$ per pass",
           "$ not done", "tokens/run", "uncached", "min/run", "escal.", "refused"]  # fmt: skip


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


def test_dollars_per_passed_task_and_the_share_spent_on_runs_not_done(tmp_path: Path):
    rows = [
        _row("t1", passed=True, outcome="done", dollars=0.02),
        _row("t2", passed=False, outcome="gates_failed", dollars=0.03),
        _row("t3", passed=False, outcome="done", dollars=0.01),  # done, hidden tests failed
    ]
    stats = group_stats(rows)

    assert stats["dollars_per_passed_task"] == {"low": 0.06, "high": 0.06}  # every run's dollars
    assert stats["not_done_dollars_share"] == 0.5
    assert group_stats(rows[1:])["dollars_per_passed_task"] is None  # nothing passed


def _row(task: str, *, passed: bool, outcome: str, dollars: float) -> ResultRow:
    return ResultRow(
        task=f"s/{task}",
        suite="s",
        contestant="c",
        contestant_kind="policy",
        attempt=0,
        passed=passed,
        outcome=outcome,
        dollars_low=dollars,
        dollars_high=dollars,
    )
