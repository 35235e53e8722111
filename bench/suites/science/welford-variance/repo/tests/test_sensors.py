import pytest

from sensors.adc import counts_to_volts
from sensors.stats import RunningStats


def test_full_scale_is_vref():
    assert counts_to_volts(4095) == pytest.approx(3.3)
    with pytest.raises(ValueError):
        counts_to_volts(4096)


def test_mean_min_max():
    stats = RunningStats([4.0, 7.0, 13.0, 16.0])
    assert stats.n == 4
    assert stats.mean == pytest.approx(10.0)
    assert (stats.min, stats.max) == (4.0, 16.0)


def test_empty_stats():
    assert RunningStats().variance == 0.0
