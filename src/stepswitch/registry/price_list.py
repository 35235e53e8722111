"""`ssw prices`: every model's list prices and where each came from (the preset, or the user's
price cache with the list's URL and date), and which providers' prices `ssw prices refresh` can
re-read (the rest come from their preset file alone)."""

from __future__ import annotations

from stepswitch.errors import UsageError
from stepswitch.registry.in_force import price_in_force
from stepswitch.registry.presets import Price, ProviderSpec
from stepswitch.registry.price_cache import all_cached, cache_dir
from stepswitch.registry.trust import origin_of

_COLUMNS = ("provider", "model", "in $/M", "cached", "write", "out $/M", "as of", "from", "source")


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def refreshable(specs: list[ProviderSpec]) -> list[str]:
    """The providers whose model list carries prices: the ones `ssw prices refresh` can read."""
    return sorted(spec.name for spec in specs if spec.prices_endpoint)


def not_refreshable(spec: ProviderSpec, specs: list[ProviderSpec]) -> UsageError:
    """Refusing `ssw prices refresh` before any key or call: this provider lists no prices."""
    able = " or ".join(refreshable(specs)) or "none"
    return UsageError(
        f"{spec.name}'s model list has no prices: they come from its registry file "
        f"registry/providers/{spec.name}.toml, edited from the provider's pricing page "
        f"(refreshable: {able})"
    )


def _rows(spec: ProviderSpec) -> list[tuple[str, str, Price | None]]:
    """(model, where its price came from, the price) for calls to the preset's own host, then
    what the cache holds for models the preset does not list and for other hosts."""
    own = origin_of(spec.base_url)
    caches = all_cached(spec.name)
    at_own = next((c for c in caches if c.origin == own), None)
    rows: list[tuple[str, str, Price | None]] = []
    for model_id in spec.models:
        price = price_in_force(spec, model_id, own, at_own)
        read = at_own is not None and price is at_own.prices.get(model_id)
        rows.append((model_id, "cache" if read else "preset", price))
    for cached in caches:
        listed = spec.models if cached is at_own else {}
        rows.extend((m, "cache", p) for m, p in sorted(cached.prices.items()) if m not in listed)
    return rows


def render_prices(specs: list[ProviderSpec]) -> str:
    table: list[tuple[str, ...]] = [_COLUMNS]
    for spec in specs:
        for model_id, where, price in _rows(spec):
            if price is not None:
                money = (price.input, price.cached_input, price.cache_write, price.output)
                cells = (*map(_money, money), price.as_of.isoformat(), where, price.source)
            else:
                cells = ("unknown",) * 4 + ("-", where, "-")
            table.append((spec.name, model_id, *cells))
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in table
    ]
    able = "|".join(refreshable(specs)) or "(none)"
    footer = [
        f"from: preset (the file ssw ships) or cache (read from the source's model list, kept in "
        f"{cache_dir() / 'prices'}; it applies only to calls to the source's host)",
        f"ssw prices refresh {able} re-reads those providers' own lists into your cache; "
        "the others' prices are edited in registry/providers/NAME.toml",
    ]
    return "\n".join([*(line.rstrip() for line in lines), "", *footer])
