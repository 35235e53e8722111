from collections.abc import Callable

Function = Callable[[float], float]


def trapezoid(f: Function, a: float, b: float, n: int) -> float:
    """Composite trapezoid rule with n intervals."""
    if n < 1:
        raise ValueError("n must be at least 1")
    h = (b - a) / n
    inner = sum(f(a + i * h) for i in range(1, n))
    return h * (0.5 * f(a) + inner + 0.5 * f(b))


def simpson(f: Function, a: float, b: float, n: int) -> float:
    """Composite Simpson rule with n intervals (n even)."""
    if n < 2 or n % 2:
        raise ValueError("n must be even and at least 2")
    h = (b - a) / n
    total = f(a) + f(b)
    for i in range(1, n):
        weight = 2 if i % 2 else 4
        total += weight * f(a + i * h)
    return total * h / 3
