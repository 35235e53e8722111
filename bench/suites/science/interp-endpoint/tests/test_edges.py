import pytest

from atmos.constants import ALTITUDES_M, DENSITIES_KG_M3
from atmos.density import density_at, pressure_at
from atmos.interp import linear


@pytest.mark.parametrize(("h", "rho"), list(zip(ALTITUDES_M, DENSITIES_KG_M3)))
def test_every_knot_gives_the_table_value(h, rho):
    assert density_at(h) == rho


def test_top_of_the_table():
    assert density_at(20000.0) == 0.08891
    assert pressure_at(20000.0) == pytest.approx(0.08891 * 287.05287 * 216.65, rel=1e-12)


def test_just_below_the_top():
    assert density_at(19999.0) == pytest.approx(0.08891 + (0.19476 - 0.08891) / 5000, rel=1e-12)


@pytest.mark.parametrize("h", [20000.5, 1e6, -0.5])
def test_outside_the_table_is_a_value_error_naming_the_range(h):
    with pytest.raises(ValueError, match="20000"):
        density_at(h)


def test_two_point_table_end():
    assert linear(1.0, [0.0, 1.0], [3.0, 5.0]) == 5.0
