import math

import pytest

from radiation.planck import spectral_radiance
from radiation.quadrature import simpson, trapezoid


def test_trapezoid_is_exact_for_lines():
    assert trapezoid(lambda x: 3 * x + 1, 0.0, 2.0, 5) == pytest.approx(8.0, rel=1e-14)


def test_trapezoid_converges():
    assert trapezoid(math.sin, 0.0, math.pi, 1000) == pytest.approx(2.0, rel=1e-6)


def test_simpson_needs_an_even_count():
    with pytest.raises(ValueError):
        simpson(math.sin, 0.0, 1.0, 3)


def test_radiance_of_the_sun_at_500nm():
    assert spectral_radiance(500e-9, 5772.0) == pytest.approx(2.6239e13, rel=1e-4)


def test_wien_peak():
    # Wien's displacement law: the peak is at b / T, b = 2.897771955e-3 m K
    peak = 2.897771955e-3 / 5772.0
    assert spectral_radiance(peak, 5772.0) > spectral_radiance(peak * 1.01, 5772.0)
    assert spectral_radiance(peak, 5772.0) > spectral_radiance(peak * 0.99, 5772.0)
