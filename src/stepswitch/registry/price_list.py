"""`ssw prices`: every model's list prices as the registry holds them, and which providers'
prices `ssw prices refresh` can re-read (the rest come from their preset file alone)."""

from __future__ import annotations

from stepswitch.errors import UsageError
from stepswitch.registry.presets import Price, ProviderSpec

_COLUMNS = ("provider", "model", "in $/M", "cached", "write", "out $/M", "as of", "source")


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


def render_prices(specs: list[ProviderSpec]) -> str:
    table: list[tuple[str, ...]] = [_COLUMNS]
    for spec in specs:
        for model_id, model in spec.models.items():
            price = model.price
            if isinstance(price, Price):
                money = (price.input, price.cached_input, price.cache_write, price.output)
                cells = (*map(_money, money), price.as_of.isoformat(), price.source)
            else:
                cells = ("unknown",) * 4 + ("-", "-")
            table.append((spec.name, model_id, *cells))
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in table
    ]
    able = "|".join(refreshable(specs)) or "(none)"
    footer = (
        f"ssw prices refresh {able} re-reads those providers' own lists; "
        "the others' prices are edited in registry/providers/NAME.toml"
    )
    return "\n".join([*(line.rstrip() for line in lines), "", footer])
