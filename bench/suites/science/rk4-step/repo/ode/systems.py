import math

from ode.constants import G0
from ode.integrators import System
from ode.vec import Vector


def growth(rate: float) -> System:
    return lambda t, y: (rate * y[0],)


def oscillator(omega: float) -> System:
    """x'' = -omega^2 x, as (x, v)."""
    return lambda t, y: (y[1], -(omega**2) * y[0])


def pendulum(length_m: float) -> System:
    """theta'' = -(g / L) sin(theta), as (theta, omega)."""
    return lambda t, y: (y[1], -(G0 / length_m) * math.sin(y[0]))


def pendulum_energy(state: Vector, length_m: float) -> float:
    """Energy per unit mass, J/kg."""
    theta, omega = state
    return 0.5 * (length_m * omega) ** 2 + G0 * length_m * (1 - math.cos(theta))
