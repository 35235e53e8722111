"""The simulated population's tests: a population file written per test, a real bench task."""

from __future__ import annotations

from pathlib import Path

import tomli_w

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "bench/suites/general/csv-quoting"


def population_file(folder: Path, *, seed: int = 7, **tier: object) -> Path:
    """Every sim model on one tier that behaves as `tier` says (fix_rate 1.0 unless given)."""
    behaviour = {"fix_rate": 1.0, "output_tokens": 100, "reasoning_tokens": 50, **tier}
    data = {
        "seed": seed,
        "tiers": {"only": behaviour},
        "models": {m: "only" for m in ("sim-small", "sim-mid", "sim-large", "sim-other")},
    }
    path = folder / "population.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path
