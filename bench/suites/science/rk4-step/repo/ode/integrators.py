from collections.abc import Callable

from ode.vec import Vector, axpy, combine

System = Callable[[float, Vector], Vector]
Step = Callable[[System, float, Vector, float], Vector]


def euler_step(f: System, t: float, y: Vector, h: float) -> Vector:
    return axpy(y, h, f(t, y))


def rk4_step(f: System, t: float, y: Vector, h: float) -> Vector:
    """Classical fourth-order Runge-Kutta."""
    k1 = f(t, y)
    k2 = f(t + h / 2, axpy(y, h / 2, k1))
    k3 = f(t + h / 2, axpy(y, h / 2, k1))
    k4 = f(t + h, axpy(y, h, k3))
    return combine(y, h, [1 / 6, 1 / 3, 1 / 3, 1 / 6], [k1, k2, k3, k4])


def integrate(
    f: System, t0: float, y0: Vector, t1: float, steps: int, step: Step = rk4_step
) -> list[tuple[float, Vector]]:
    """The solution at steps + 1 equally spaced times from t0 to t1."""
    if steps < 1:
        raise ValueError("steps must be at least 1")
    h = (t1 - t0) / steps
    out = [(t0, tuple(y0))]
    y = tuple(y0)
    for i in range(steps):
        y = step(f, t0 + i * h, y, h)
        out.append((t0 + (i + 1) * h, y))
    return out
