from collections.abc import Iterable

from sensors.adc import counts_to_volts
from sensors.stats import RunningStats


def summarize(counts: Iterable[int]) -> dict[str, float]:
    stats = RunningStats(counts_to_volts(c) for c in counts)
    return {
        "n": stats.n,
        "mean_v": stats.mean,
        "noise_uv": stats.stddev * 1e6,
        "span_v": stats.max - stats.min,
    }
