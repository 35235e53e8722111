"""Totals of the reference meter series, as JSON."""

import json

from energy.meter import Reading
from energy.totals import energy_by_day, to_kwh, total_energy

START = 1_714_521_600  # 2024-05-01 00:00 UTC


def reference_series() -> list[Reading]:
    base = [Reading(START, 1e12)]
    return base + [Reading(START + i, 0.1) for i in range(1, 200_001)]


if __name__ == "__main__":
    series = reference_series()
    total = total_energy(series)
    days = energy_by_day(series)
    values = {
        "total_j": total,
        "total_kwh": to_kwh(total),
        "days_j": {str(d): v for d, v in days.items()},
    }
    print(json.dumps(values, indent=2, sort_keys=True))
