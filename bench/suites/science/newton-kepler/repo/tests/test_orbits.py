import math

import pytest

from orbits.kepler import eccentric_anomaly, period_days, true_anomaly
from orbits.solver import NoConvergence, newton


def test_earth_year():
    assert period_days(1.0) == pytest.approx(365.256, abs=1e-3)


def test_newton_finds_a_square_root():
    assert newton(lambda x: x * x - 2, lambda x: 2 * x, 1.0) == pytest.approx(math.sqrt(2))


def test_newton_gives_up():
    with pytest.raises(NoConvergence):
        newton(lambda x: x * x + 1, lambda x: 2 * x, 0.5, max_iter=20)


def test_kepler_away_from_periapsis():
    E = eccentric_anomaly(1.0, 0.3)
    assert E - 0.3 * math.sin(E) == pytest.approx(1.0, abs=1e-12)


def test_circular_orbit_anomalies_agree():
    assert true_anomaly(eccentric_anomaly(2.0, 0.0), 0.0) == pytest.approx(2.0)


def test_hyperbolic_is_refused():
    with pytest.raises(ValueError):
        eccentric_anomaly(1.0, 1.2)
