import pytest

from atmos.density import density_at, pressure_at
from atmos.interp import linear


def test_sea_level():
    assert density_at(0.0) == 1.2250
    assert pressure_at(0.0) == pytest.approx(101325.0, rel=1e-4)


def test_between_knots():
    assert density_at(500.0) == pytest.approx((1.2250 + 1.1117) / 2)


def test_below_the_table():
    with pytest.raises(ValueError):
        density_at(-1.0)


def test_table_must_have_two_points():
    with pytest.raises(ValueError):
        linear(0.0, [0.0], [1.0])
