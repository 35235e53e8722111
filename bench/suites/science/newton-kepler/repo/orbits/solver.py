from collections.abc import Callable

Function = Callable[[float], float]


class NoConvergence(ArithmeticError):
    pass


def newton(f: Function, df: Function, x0: float, tol: float = 1e-13, max_iter: int = 50) -> float:
    """A root of f near x0, by Newton's method; stops when a step is within tol of x."""
    x = x0
    for _ in range(max_iter):
        slope = df(x)
        if slope == 0:
            raise NoConvergence(f"zero derivative at x = {x}")
        step = f(x) / slope
        x -= step
        if abs(step) < tol * abs(x):
            return x
    raise NoConvergence(f"no root within {max_iter} iterations from x0 = {x0}")
