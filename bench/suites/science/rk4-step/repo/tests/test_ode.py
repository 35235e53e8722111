import math

import pytest

from ode.integrators import euler_step, integrate
from ode.systems import growth, pendulum_energy
from ode.vec import axpy, combine


def test_vector_helpers():
    assert axpy((1.0, 2.0), 2.0, (3.0, 4.0)) == (7.0, 10.0)
    assert combine((0.0,), 2.0, [0.5, 0.25], [(1.0,), (2.0,)]) == (2.0,)


def test_integrate_returns_every_step():
    points = integrate(growth(1.0), 0.0, (1.0,), 1.0, 10, step=euler_step)
    assert len(points) == 11
    assert points[-1][0] == pytest.approx(1.0)


def test_euler_is_first_order():
    err = [
        abs(integrate(growth(1.0), 0.0, (1.0,), 1.0, n, step=euler_step)[-1][1][0] - math.e)
        for n in (100, 200)
    ]
    assert 1.9 < err[0] / err[1] < 2.1


def test_pendulum_at_rest_has_no_energy():
    assert pendulum_energy((0.0, 0.0), 1.0) == 0.0
