import pytest

from spectro.convert import wavelength_nm_to_ev, wavenumber_to_ev
from spectro.peaks import peak_table

EV_PER_CM = 1.2398419843320026e-4  # h c / e, with c in cm/s


def test_one_ev_is_8065_wavenumbers():
    assert wavenumber_to_ev(8065.543937349212) == pytest.approx(1.0, rel=1e-12)


def test_diamond_line():
    assert wavenumber_to_ev(1332.5) == pytest.approx(1332.5 * EV_PER_CM, rel=1e-12)


@pytest.mark.parametrize("nm", [250.0, 532.0, 1064.0])
def test_wavenumber_and_wavelength_agree(nm):
    assert wavenumber_to_ev(1e7 / nm) == pytest.approx(wavelength_nm_to_ev(nm), rel=1e-12)


def test_peak_table_energies_and_temperatures():
    table = {row["name"]: row for row in peak_table()}
    assert table["diamond"]["energy_ev"] == pytest.approx(0.165209, rel=1e-5)
    assert table["diamond"]["kelvin"] == pytest.approx(1917.17, rel=1e-5)
    assert table["water stretch"]["energy_ev"] == pytest.approx(0.421546, rel=1e-5)
    assert table["silicon"]["stokes_nm"] == pytest.approx(547.16, abs=0.01)
