import bisect
from collections.abc import Sequence


def linear(x: float, xs: Sequence[float], ys: Sequence[float]) -> float:
    """Piecewise-linear interpolation in a table with increasing xs."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("need two or more (x, y) pairs")
    if x < xs[0]:
        raise ValueError(f"{x} is outside the table [{xs[0]}, {xs[-1]}]")
    i = bisect.bisect_right(xs, x)
    x0, x1 = xs[i - 1], xs[i]
    y0, y1 = ys[i - 1], ys[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
