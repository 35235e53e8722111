import math

import pytest

from orbits.kepler import eccentric_anomaly, position_au
from orbits.solver import NoConvergence, newton


@pytest.mark.parametrize("e", [0.0, 0.3, 0.6, 0.95])
def test_periapsis(e):
    assert eccentric_anomaly(0.0, e) == 0.0 or abs(eccentric_anomaly(0.0, e)) < 1e-14


@pytest.mark.parametrize("turns", [1, 2])
def test_whole_turns(turns):
    M = 2 * math.pi * turns
    E = eccentric_anomaly(M, 0.3)
    assert E - 0.3 * math.sin(E) == pytest.approx(M, abs=1e-12)


def test_kepler_equation_on_a_grid():
    for e in (0.0, 0.1, 0.5, 0.9, 0.99):
        for k in range(-6, 7):
            M = k * math.pi / 6
            E = eccentric_anomaly(M, e)
            assert abs(E - e * math.sin(E) - M) < 1e-12, (M, e)


def test_root_at_zero():
    assert abs(newton(lambda x: math.sin(x), math.cos, 0.5)) < 1e-15


def test_still_gives_up():
    with pytest.raises(NoConvergence):
        newton(lambda x: x * x + 1, lambda x: 2 * x, 0.5, max_iter=30)


def test_position_at_periapsis():
    x, y = position_au(2.5, 0.6, 0.0)
    assert x == pytest.approx(1.0, abs=1e-12)
    assert y == pytest.approx(0.0, abs=1e-12)
