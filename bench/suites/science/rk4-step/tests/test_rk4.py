import math

import pytest

from ode.integrators import integrate, rk4_step
from ode.systems import growth, oscillator, pendulum, pendulum_energy


def final(f, y0, t1, steps):
    return integrate(f, 0.0, y0, t1, steps, step=rk4_step)[-1][1]


def test_exponential_growth_is_accurate():
    assert final(growth(1.0), (1.0,), 1.0, 100)[0] == pytest.approx(math.e, rel=1e-9)


def test_fourth_order_convergence():
    decay = lambda t, y: (-2 * t * y[0],)  # noqa: E731  y = exp(-t^2)
    exact = math.exp(-1.0)
    err = [abs(final(decay, (1.0,), 1.0, n)[0] - exact) for n in (10, 20, 40)]
    for coarse, fine in zip(err, err[1:]):
        assert 13.0 < coarse / fine < 19.0


def test_oscillator_returns_after_one_period():
    x, v = final(oscillator(2.0), (1.0, 0.0), math.pi, 400)
    assert x == pytest.approx(1.0, abs=1e-8)
    assert v == pytest.approx(0.0, abs=1e-7)


def test_pendulum_conserves_energy():
    points = integrate(pendulum(1.0), 0.0, (1.0, 0.0), 10.0, 2000, step=rk4_step)
    e0 = pendulum_energy(points[0][1], 1.0)
    worst = max(abs(pendulum_energy(y, 1.0) - e0) for _, y in points)
    assert worst < 1e-8 * e0


def test_single_step_matches_the_taylor_series():
    h = 0.1
    y1 = rk4_step(growth(1.0), 0.0, (1.0,), h)[0]
    assert y1 == pytest.approx(1 + h + h**2 / 2 + h**3 / 6 + h**4 / 24, rel=1e-15)
