"""`ssw prices refresh PROVIDER`: read the provider's priced model list (at the preset's address
or a --base-url) into the user's price cache for that host, and say what changed from the prices
in force there before. The preset is rewritten only with --write-preset (refresh.py)."""

from __future__ import annotations

import os

from stepswitch.registry.first_use import read_prices
from stepswitch.registry.in_force import price_in_force
from stepswitch.registry.presets import Price, ProviderSpec
from stepswitch.registry.price_cache import read_cached
from stepswitch.registry.refresh import diff_price, prices_url
from stepswitch.registry.trust import Trust, origin_of

_FIELDS = ("input", "cached_input", "cache_write", "output")


def _table(price: Price) -> dict[str, float]:
    return {f: v for f in _FIELDS if (v := getattr(price, f)) is not None}


def refresh_cache(spec: ProviderSpec, base_url: str | None, trust: Trust) -> list[str]:
    """Read the list, keep it in the cache; the lines to print: each price that changed for a
    model known before (listed by the preset or cached), then where the prices were kept."""
    origin = origin_of(prices_url(spec, base_url))
    before = read_cached(spec.name, origin)
    reading = read_prices(spec, base_url, spec.models, os.environ, trust)
    after = reading.cached
    known = set(spec.models) | set(before.prices if before is not None else ())
    lines: list[str] = []
    for model_id in sorted(known):
        old = price_in_force(spec, model_id, origin, before)
        new = price_in_force(spec, model_id, origin, after)
        if new is not None:
            changes = diff_price(model_id, "unknown" if old is None else _table(old), _table(new))
            lines.extend(str(change) for change in changes)
    first = sorted(set(after.prices) - known)
    if not lines:
        lines.append(f"{spec.name}: prices unchanged")
    if first:
        models = "model" if len(first) == 1 else "models"
        lines.append(f"{spec.name}: {len(first)} {models} priced for the first time")
    lines.append(
        f"{spec.name}: {len(after.prices)} prices from {after.url} kept in your price cache "
        f"({after.path}) for calls to {origin}; the preset is as it was (--write-preset "
        "rewrites it)"
    )
    return lines
