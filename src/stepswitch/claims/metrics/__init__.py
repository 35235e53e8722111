"""Every metric a claim may name, by name. A new metric is a function in one of these modules and
a line in its `METRICS`."""

from __future__ import annotations

from functools import cache

from stepswitch.claims.metrics.base import Computed, Metric


@cache
def all_metrics() -> dict[str, Metric]:
    from stepswitch.claims.metrics import bench, gates, perf, pricing, runs

    found: dict[str, Metric] = {}
    for module in (bench, gates, perf, pricing, runs):
        for metric in module.METRICS:
            assert metric.name not in found, metric.name
            found[metric.name] = metric
    return found


__all__ = ["Computed", "Metric", "all_metrics"]
