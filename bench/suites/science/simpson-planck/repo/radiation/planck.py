import math

from radiation.constants import C, H, K_B
from radiation.quadrature import simpson

X_MAX = 60.0  # beyond x = hc/(lambda k T) = 60 the integrand is below 1e-20 of its peak
STEPS = 2000


def spectral_radiance(wavelength_m: float, temperature_k: float) -> float:
    """Planck's law, B(lambda, T) in W sr^-1 m^-3."""
    x = H * C / (wavelength_m * K_B * temperature_k)
    return 2 * H * C**2 / wavelength_m**5 / math.expm1(x)


def _bose(x: float) -> float:
    return x**3 / math.expm1(x) if x > 0 else 0.0


def radiant_exitance(temperature_k: float, steps: int = STEPS) -> float:
    """pi times the radiance integrated over all wavelengths, W/m^2 (in x = hc / (lambda k T))."""
    scale = 2 * math.pi * (K_B * temperature_k) ** 4 / (H**3 * C**2)
    return scale * simpson(_bose, 0.0, X_MAX, steps)


def band_fraction(low_m: float, high_m: float, temperature_k: float, steps: int = STEPS) -> float:
    """The share of the total exitance emitted between two wavelengths."""
    band = math.pi * simpson(lambda w: spectral_radiance(w, temperature_k), low_m, high_m, steps)
    return band / radiant_exitance(temperature_k)
