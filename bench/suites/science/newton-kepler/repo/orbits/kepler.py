import math

from orbits.constants import AU, DAY, GM_SUN
from orbits.solver import newton


def eccentric_anomaly(mean_anomaly: float, e: float) -> float:
    """E with E - e sin E = M, for 0 <= e < 1."""
    if not 0 <= e < 1:
        raise ValueError("elliptic orbits only: 0 <= e < 1")
    guess = mean_anomaly if e < 0.8 else math.pi * math.copysign(1.0, math.sin(mean_anomaly) or 1.0)
    return newton(
        lambda E: E - e * math.sin(E) - mean_anomaly,
        lambda E: 1 - e * math.cos(E),
        guess,
    )


def true_anomaly(E: float, e: float) -> float:
    return 2 * math.atan2(math.sqrt(1 + e) * math.sin(E / 2), math.sqrt(1 - e) * math.cos(E / 2))


def period_days(a_au: float) -> float:
    a = a_au * AU
    return 2 * math.pi * math.sqrt(a**3 / GM_SUN) / DAY


def position_au(a_au: float, e: float, days_since_periapsis: float) -> tuple[float, float]:
    """Position in the orbital plane, periapsis on +x."""
    M = 2 * math.pi * days_since_periapsis / period_days(a_au)
    E = eccentric_anomaly(M, e)
    return a_au * (math.cos(E) - e), a_au * math.sqrt(1 - e**2) * math.sin(E)
