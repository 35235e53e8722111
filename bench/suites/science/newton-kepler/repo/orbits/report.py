"""An ephemeris of a comet-like orbit over one period, as JSON."""

import json

from orbits.kepler import period_days, position_au

A_AU, E = 2.5, 0.6

if __name__ == "__main__":
    period = period_days(A_AU)
    points = [position_au(A_AU, E, period * k / 8) for k in range(9)]
    values = {"period_days": period, "ephemeris_au": [{"x": x, "y": y} for x, y in points]}
    print(json.dumps(values, indent=2, sort_keys=True))
