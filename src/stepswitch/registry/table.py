"""Rows for `ssw models`: one per model, prices per million tokens (the user's price cache first,
registry/in_force.py), never a guessed zero."""

from __future__ import annotations

from typing import Any

from stepswitch.registry.presets import Price, load_registry


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def model_rows(provider: str | None = None) -> list[dict[str, Any]]:
    from stepswitch.registry.in_force import with_cached_prices
    from stepswitch.registry.presets import get_provider

    specs = [get_provider(provider)] if provider else list(load_registry().values())
    specs = [with_cached_prices(spec) for spec in specs]  # as calls to the preset's host see them
    rows: list[dict[str, Any]] = []
    for spec in specs:
        for model_id, model in spec.models.items():
            price = model.price
            rows.append(
                {
                    "provider": spec.name,
                    "model": model_id,
                    "wire_format": model.wire_format or spec.default_wire_format,
                    "family": model.family,
                    "context_window": model.context_window,
                    "price": price.model_dump(mode="json")
                    if isinstance(price, Price)
                    else "unknown",
                    "reasoning_efforts": list(model.reasoning_efforts),
                    "capabilities": list(model.capabilities),
                }
            )
    return rows


_COLUMNS = (
    "provider",
    "model",
    "in $/M",
    "cached",
    "write",
    "out $/M",
    "context",
    "efforts",
    "caps",
)


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    price = row["price"]
    money: tuple[str, ...]
    if price == "unknown":
        money = ("unknown",) * 4
    else:
        money = tuple(_money(price[k]) for k in ("input", "cached_input", "cache_write", "output"))
    context = row["context_window"]
    return (
        row["provider"],
        row["model"],
        *money,
        f"{context:,}" if context else "?",
        ",".join(row["reasoning_efforts"]) or "-",
        ",".join(row["capabilities"]) or "?",
    )


def render_rows(rows: list[dict[str, Any]]) -> str:
    table = [_COLUMNS, *(_cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in table
    ]
    return "\n".join(line.rstrip() for line in lines)
