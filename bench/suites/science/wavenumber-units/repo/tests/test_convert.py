import pytest

from spectro.convert import ev_to_kelvin, wavelength_nm_to_ev, wavenumber_to_nm
from spectro.peaks import Peak


def test_photon_energy_of_1240_nm_is_one_ev():
    assert wavelength_nm_to_ev(1239.8419843320026) == pytest.approx(1.0, rel=1e-12)


def test_green_laser():
    assert wavelength_nm_to_ev(532.0) == pytest.approx(2.33053, rel=1e-5)


def test_one_ev_in_kelvin():
    assert ev_to_kelvin(1.0) == pytest.approx(11604.518, rel=1e-7)


def test_wavenumber_to_wavelength():
    assert wavenumber_to_nm(20000.0) == pytest.approx(500.0, rel=1e-12)


def test_stokes_line_of_silicon():
    assert Peak("si", 520.7).stokes_line_nm(532.0) == pytest.approx(547.16, abs=0.01)
