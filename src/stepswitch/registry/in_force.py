"""Which price a model is billed at for calls to one origin (ADR 0061): the price the user's
cache holds for that origin, else the preset's. At the preset's own origin the later-dated of the
two wins, so a newer ssw's corrected preset is not shadowed by an old reading; at any other
origin (a gateway, a proxy) only what that origin's own list said applies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from stepswitch.registry.presets import ModelSpec, Price, ProviderSpec
from stepswitch.registry.price_cache import CachedPrices, read_cached
from stepswitch.registry.trust import Origin, origin_of


def preset_price(spec: ProviderSpec, model_id: str) -> Price | None:
    model = spec.models.get(model_id)
    return model.price if model is not None and isinstance(model.price, Price) else None


def price_in_force(
    spec: ProviderSpec, model_id: str, origin: Origin, cached: CachedPrices | None
) -> Price | None:
    """The price of `model_id` for calls to `origin`; None when neither cache nor preset has one."""
    shipped = preset_price(spec, model_id)
    read = cached.prices.get(model_id) if cached is not None else None
    if read is None:
        return shipped
    own = origin == origin_of(spec.base_url)
    if own and shipped is not None and shipped.as_of > read.as_of:
        return shipped
    return read


def unlisted_model(model_id: str, price: Price | Literal["unknown"]) -> ModelSpec:
    """A model the preset does not list: its own family, abilities and limits unknown."""
    return ModelSpec(family=model_id, price=price)


def with_models(spec: ProviderSpec, models: Mapping[str, ModelSpec]) -> ProviderSpec:
    """The preset with `models` added or replaced; the preset file is not touched."""
    return spec.model_copy(update={"models": {**spec.models, **models}})


def with_cached_prices(spec: ProviderSpec) -> ProviderSpec:
    """The preset as calls to its own origin see it: each listed model at its price in force."""
    if not spec.prices_endpoint:
        return spec  # nothing is ever read for it
    origin = origin_of(spec.base_url)
    cached = read_cached(spec.name, origin)
    if cached is None:
        return spec
    models = {}
    for model_id, model in spec.models.items():
        price = price_in_force(spec, model_id, origin, cached)
        if price is not None and price != model.price:
            models[model_id] = model.model_copy(update={"price": price})
    return with_models(spec, models)
