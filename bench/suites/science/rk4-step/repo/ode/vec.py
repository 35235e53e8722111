Vector = tuple[float, ...]


def axpy(y: Vector, a: float, x: Vector) -> Vector:
    """y + a * x."""
    return tuple(yi + a * xi for yi, xi in zip(y, x, strict=True))


def combine(y: Vector, h: float, weights: list[float], ks: list[Vector]) -> Vector:
    """y + h * sum(w * k)."""
    out = list(y)
    for w, k in zip(weights, ks, strict=True):
        for i, ki in enumerate(k):
            out[i] += h * w * ki
    return tuple(out)
