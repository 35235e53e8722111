import math

import pytest

from radiation.constants import SIGMA_SB
from radiation.planck import band_fraction, radiant_exitance
from radiation.quadrature import simpson


def test_simpson_is_exact_for_cubics():
    cubic = lambda x: 4 * x**3 - 3 * x**2 + 2 * x - 1  # noqa: E731
    assert simpson(cubic, -1.0, 2.0, 2) == pytest.approx(6.0, rel=1e-13)
    assert simpson(cubic, -1.0, 2.0, 10) == pytest.approx(6.0, rel=1e-13)


def test_simpson_converges_at_fourth_order():
    errors = [abs(simpson(math.exp, 0.0, 1.0, n) - math.expm1(1.0)) for n in (8, 16, 32)]
    for coarse, fine in zip(errors, errors[1:]):
        assert 14.0 < coarse / fine < 17.0


@pytest.mark.parametrize("temperature", [300.0, 1000.0, 5772.0])
def test_exitance_is_stefan_boltzmann(temperature):
    assert radiant_exitance(temperature) == pytest.approx(SIGMA_SB * temperature**4, rel=1e-8)


def test_bands_add_up():
    sun = 5772.0
    total = (
        band_fraction(100e-9, 380e-9, sun)
        + band_fraction(380e-9, 750e-9, sun)
        + band_fraction(750e-9, 1e-3, sun, steps=20000)
    )
    assert total == pytest.approx(1.0, abs=1e-5)
    assert band_fraction(380e-9, 750e-9, sun) == pytest.approx(0.4377, abs=1e-3)
