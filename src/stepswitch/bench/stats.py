"""Paired statistics over tasks, in plain Python: a cluster bootstrap (tasks are the clusters,
resampled with replacement, a fixed seed so every figure is reproducible) with percentile
intervals, and McNemar's exact test (a two-sided binomial test on the discordant pairs)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TypeVar

RESAMPLES = 10_000
SEED = 20261201
LEVEL = 0.95

T = TypeVar("T")


@dataclass(frozen=True)
class Interval:
    point: float | None  # the statistic on the tasks as they are; None: undefined (0 / 0)
    low: float | None
    high: float | None
    resamples: int  # resamples drawn
    undefined: int = 0  # resamples where the statistic was undefined, left out of the interval

    def as_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def percentile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) of sorted values, interpolated linearly between order statistics
    (Hyndman and Fan's type 7, numpy's default)."""
    if not ordered:
        raise ValueError("no values")
    at = q * (len(ordered) - 1)
    below = math.floor(at)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (at - below)


def cluster_bootstrap(
    clusters: Sequence[T],
    statistics: Mapping[str, Callable[[Sequence[T]], float | None]],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, Interval]:
    """Each statistic and its percentile interval, over the same resamples of whole clusters."""
    points = {name: stat(clusters) for name, stat in statistics.items()}
    if not clusters:
        return {name: Interval(point, None, None, 0) for name, point in points.items()}
    rng = random.Random(seed)
    n = len(clusters)
    values: dict[str, list[float]] = {name: [] for name in statistics}
    for _ in range(resamples):
        sample = rng.choices(clusters, k=n)
        for name, stat in statistics.items():
            value = stat(sample)
            if value is not None:
                values[name].append(value)
    tail = (1 - level) / 2
    out = {}
    for name, found in values.items():
        undefined = resamples - len(found)
        if not found:
            out[name] = Interval(points[name], None, None, resamples, undefined)
            continue
        found.sort()
        low, high = percentile(found, tail), percentile(found, 1 - tail)
        out[name] = Interval(points[name], low, high, resamples, undefined)
    return out


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: twice the smaller binomial tail of the discordant pairs
    under p = 1/2, capped at 1. No discordant pair: 1."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * float(tail))
