"""Prices on first use: a model with no known price gets one from the provider's priced model
list the first time a run or `ssw init` needs it, when the provider's key is in the environment.
What the list says is kept in the user's price cache for the host it was read from (ADR 0061),
never in a preset, so the next run reads it from there."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from stepswitch.registry.presets import Price, ProviderSpec
from stepswitch.registry.price_cache import CachedPrices, write_cached
from stepswitch.registry.refresh import prices_url, read_listing
from stepswitch.registry.trust import Destination, Trust, check_destination


@dataclass(frozen=True)
class PricesReading:
    """One provider's prices, read from one host's model list by this process."""

    wanted: tuple[str, ...]  # the models the reading was for
    cached: CachedPrices  # what the list said, as the cache now holds it

    @property
    def provider(self) -> str:
        return self.cached.provider

    @property
    def url(self) -> str:  # the model list the prices came from
        return self.cached.url

    @property
    def at(self) -> datetime:  # when, in UTC
        return self.cached.read_at

    @property
    def line(self) -> str:
        priced = sorted({m for m in self.wanted if m in self.cached.prices})
        what = f"prices of {', '.join(priced)}" if priced else "no price of what is needed"
        return f"prices: read {what} from {self.url} (kept in your price cache: {self.cached.path})"


def key_in(spec: ProviderSpec, env: Mapping[str, str]) -> str | None:
    """The provider's key when its variable is set, else None (no error: the caller decides)."""
    if spec.api_key_env is None:
        return None
    return env.get(spec.api_key_env, "").strip() or None


def can_read_prices(spec: ProviderSpec, env: Mapping[str, str]) -> bool:
    """The provider lists prices and, when it takes a key, its key is set."""
    return bool(spec.prices_endpoint) and (
        spec.api_key_env is None or key_in(spec, env) is not None
    )


def read_prices(
    spec: ProviderSpec,
    base_url: str | None,
    wanted: Iterable[str],
    env: Mapping[str, str],
    trust: Trust,
) -> PricesReading:
    """Read the provider's priced model list at `base_url` (None: the preset's), asked only
    where `trust` lets its key go, and keep every listed price in the user's cache for that
    host. `wanted`: the models the caller reads them for, for the line it prints."""
    url = prices_url(spec, base_url)
    where = f"reading {spec.name}'s prices"  # the URL asked, not only its base
    origin = check_destination(Destination(where, spec.api_key_env, url), trust)
    listing = read_listing(spec, url, key_in(spec, env))
    now = datetime.now(UTC)
    prices = {
        model_id: Price.model_validate({**fields, "source": url, "as_of": now.date()})
        for model_id, fields in listing.items()
        if fields is not None
    }
    path = write_cached(spec.name, origin, url, now, prices)
    cached = CachedPrices(spec.name, origin, url, now, prices, path)
    return PricesReading(tuple(wanted), cached)
