"""A runner's report file as text: empty when the command never wrote it (it did not start, or
was stopped first), so the runner falls back on the command's output."""

from __future__ import annotations

from pathlib import Path


def read_report(report: Path) -> str:
    try:
        return report.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
