import random
import statistics

import pytest

from sensors.calibrate import summarize
from sensors.stats import RunningStats


def test_textbook_example():
    assert RunningStats([4.0, 7.0, 13.0, 16.0]).variance == pytest.approx(30.0, rel=1e-15)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_statistics_variance(seed):
    rng = random.Random(seed)
    data = [rng.uniform(-50, 150) for _ in range(500)]
    stats = RunningStats(data)
    assert stats.variance == pytest.approx(statistics.variance(data), rel=1e-12)
    assert stats.stddev == pytest.approx(statistics.stdev(data), rel=1e-12)


def test_large_offset_is_stable():
    stats = RunningStats(1e9 + x for x in (4.0, 7.0, 13.0, 16.0))
    assert stats.variance == pytest.approx(30.0, rel=1e-9)


def test_single_reading_has_no_variance():
    assert RunningStats([3.0]).variance == 0.0


def test_noise_of_a_constant_signal_is_zero():
    assert summarize([2048] * 100)["noise_uv"] == 0.0


def test_noise_in_microvolts():
    summary = summarize([2047, 2049] * 50)
    volts = [c * 3.3 / 4095 for c in [2047, 2049] * 50]
    assert summary["noise_uv"] == pytest.approx(statistics.stdev(volts) * 1e6, rel=1e-12)
