from spectro.constants import C, CM, E_CHARGE, H, K_B, NM


def wavelength_nm_to_ev(wavelength_nm: float) -> float:
    """Photon energy of a vacuum wavelength."""
    return H * C / (wavelength_nm * NM) / E_CHARGE


def wavenumber_to_ev(wavenumber_cm: float) -> float:
    """Energy of a wavenumber given in cm^-1."""
    return H * C * wavenumber_cm / E_CHARGE


def wavenumber_to_nm(wavenumber_cm: float) -> float:
    """Vacuum wavelength of a wavenumber given in cm^-1."""
    return CM / wavenumber_cm / NM


def ev_to_kelvin(energy_ev: float) -> float:
    """The temperature whose k_B T equals the energy."""
    return energy_ev * E_CHARGE / K_B
