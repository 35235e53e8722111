from collections.abc import Iterable

from energy.constants import J_PER_KWH, SECONDS_PER_DAY
from energy.meter import Reading


def total_energy(readings: Iterable[Reading]) -> float:
    """Joules over all readings."""
    return sum(r.joules for r in readings)


def energy_by_day(readings: Iterable[Reading]) -> dict[int, float]:
    """Joules per UTC day (days since the epoch)."""
    days: dict[int, list[float]] = {}
    for r in readings:
        days.setdefault(r.timestamp_s // SECONDS_PER_DAY, []).append(r.joules)
    return {day: sum(values) for day, values in sorted(days.items())}


def to_kwh(joules: float) -> float:
    return joules / J_PER_KWH
