"""Prices on first use: a model the preset lists as `price = "unknown"` gets its price from the
provider's own model list the first time a run or `ssw init` needs it, when the provider's key
is in the environment. The preset is rewritten as `ssw prices refresh` rewrites it, so the next
run reads the prices from the file."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from stepswitch.errors import UsageError
from stepswitch.registry.presets import ProviderSpec, clear_cache, preset_path
from stepswitch.registry.refresh import PriceChange, prices_url, refresh_prices
from stepswitch.registry.trust import Destination, Trust, check_destination


@dataclass(frozen=True)
class PricesReading:
    """One provider's prices, read from its model list by this process."""

    provider: str
    url: str  # the model list the prices came from
    at: datetime  # when, in UTC
    changes: tuple[PriceChange, ...]

    @property
    def line(self) -> str:
        priced = sorted({c.model for c in self.changes if not c.unlisted})
        what = f"prices of {', '.join(priced)}" if priced else "no new price"
        return f"prices: read {what} from {self.url} (kept in the {self.provider} preset)"


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


def read_missing_prices(
    registry: Mapping[str, ProviderSpec],
    wanted: Iterable[tuple[str, str, str | None]],
    env: Mapping[str, str],
    trust: Trust,
) -> list[PricesReading]:
    """For each provider of `wanted` (provider, model id, base URL or None for the preset's)
    whose wanted model has no known price and that can list prices with the key in `env`:
    refresh its preset from its model list, asked only where `trust` lets its key go.
    Providers that cannot are left for the caller's refusal to name. The registry cache is
    cleared when a preset changed."""
    todo: dict[str, str | None] = {}
    for provider, model_id, base_url in wanted:
        spec = registry.get(provider)
        model = spec.models.get(model_id) if spec is not None else None
        if spec is None or model is None or model.priced or not can_read_prices(spec, env):
            continue
        todo.setdefault(provider, base_url)
    reads = []
    for provider, base_url in todo.items():
        spec = registry[provider]
        where = f"reading {provider}'s prices"  # the URL asked, not only its base
        check_destination(Destination(where, spec.api_key_env, prices_url(spec, base_url)), trust)
        preset = preset_path(provider)
        try:
            changes = refresh_prices(
                spec,
                preset,
                base_url=base_url,
                api_key=key_in(spec, env),
                today=datetime.now(UTC).date(),
            )
        except OSError as exc:  # an installed, read-only registry: say where a copy can go
            raise UsageError(
                f"{provider}: cannot write the prices read from its model list to {preset} "
                f"({exc.strerror or exc}); copy the registry folder somewhere writable and "
                "point SSW_REGISTRY at it"
            ) from None
        url = prices_url(spec, base_url)
        reads.append(PricesReading(provider, url, datetime.now(UTC), tuple(changes)))
    if reads:
        clear_cache()
    return reads
