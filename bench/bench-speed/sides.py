"""What run.py and cluster.py share: sessions run side by side, alternating (A, B, then B, A),
summed up as each side's median and the B/A ratio of each repetition, and the machine they ran
on."""

from __future__ import annotations

import os
import platform
import statistics
from typing import Any


def side_by_side(
    sessions: list[dict[str, Any]], side: str, metric: str, a: Any, b: Any
) -> tuple[dict[Any, float], list[float]]:
    """The median of `metric` for sides `a` and `b` (the value of key `side`), and `b`'s
    `metric` over `a`'s in each repetition (two sessions in a row, one of each side)."""
    medians = {w: statistics.median(s[metric] for s in sessions if s[side] == w) for w in (a, b)}
    pairs = []
    for i in range(0, len(sessions), 2):
        by = {s[side]: s[metric] for s in sessions[i : i + 2]}
        pairs.append(round(by[b] / by[a], 3))
    return medians, pairs


def machine(**extra: str) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        **extra,
    }
