"""Density and pressure on a grid of altitudes, as JSON."""

import json

from atmos.density import density_at, pressure_at

if __name__ == "__main__":
    grid = [0.0, 500.0, 1000.0, 3500.0, 8000.0, 12500.0, 19000.0, 20000.0]
    values = {
        "density_kg_m3": {str(h): density_at(h) for h in grid},
        "pressure_pa": {str(h): pressure_at(h) for h in grid},
    }
    print(json.dumps(values, indent=2, sort_keys=True))
