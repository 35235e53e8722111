import math
import random

from energy.meter import Reading
from energy.summation import compensated_sum
from energy.totals import energy_by_day, total_energy


def test_cancellation():
    assert compensated_sum([1e100, 1.0, -1e100]) == 1.0


def test_empty_and_generators():
    assert compensated_sum([]) == 0.0
    assert compensated_sum(x / 10 for x in range(11)) == math.fsum(x / 10 for x in range(11))


def test_random_values_match_fsum():
    rng = random.Random(7)
    values = [rng.uniform(-1, 1) * 10 ** rng.randint(-10, 10) for _ in range(20_000)]
    exact = math.fsum(values)
    assert abs(compensated_sum(values) - exact) <= 4 * math.ulp(abs(exact)) + 1e-300


def test_meter_series_keeps_small_increments():
    series = [Reading(0, 1e12)] + [Reading(i, 0.1) for i in range(1, 200_001)]
    assert abs(total_energy(series) - math.fsum(r.joules for r in series)) <= math.ulp(1e12)
    assert abs(total_energy(series) - (1e12 + 20_000)) < 1e-3


def test_days_are_compensated_too():
    series = [Reading(0, 1e12)] + [Reading(1, 0.1)] * 100_000 + [Reading(86_400, 0.1)] * 10
    days = energy_by_day(series)
    assert abs(days[0] - (1e12 + 10_000)) < 1e-3
    assert math.isclose(days[1], 1.0, rel_tol=1e-15)
