from atmos.constants import ALTITUDES_M, DENSITIES_KG_M3, R_AIR, TEMPERATURES_K
from atmos.interp import linear


def density_at(altitude_m: float) -> float:
    return linear(altitude_m, ALTITUDES_M, DENSITIES_KG_M3)


def temperature_at(altitude_m: float) -> float:
    return linear(altitude_m, ALTITUDES_M, TEMPERATURES_K)


def pressure_at(altitude_m: float) -> float:
    """Ideal gas: p = rho R T."""
    return density_at(altitude_m) * R_AIR * temperature_at(altitude_m)
