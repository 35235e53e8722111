"""Print the values we publish, as JSON (the golden gate compares them)."""

import json

from radiation.planck import band_fraction, radiant_exitance, spectral_radiance

SUN_K = 5772.0


def values() -> dict[str, object]:
    return {
        "exitance_w_m2": {str(t): radiant_exitance(t) for t in (300.0, 1000.0, SUN_K)},
        "sun_visible_fraction": band_fraction(380e-9, 750e-9, SUN_K),
        "sun_infrared_fraction": band_fraction(750e-9, 1e-3, SUN_K, steps=20000),
        "sun_radiance_500nm": spectral_radiance(500e-9, SUN_K),
    }


if __name__ == "__main__":
    print(json.dumps(values(), indent=2, sort_keys=True))
