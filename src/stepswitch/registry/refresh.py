"""`ssw prices refresh`: read a provider's priced model list, rewrite the preset's price tables."""

from __future__ import annotations

import os
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stepswitch.errors import AuthError, ConfigError, ProviderError, UsageError
from stepswitch.registry.presets import ProviderSpec, parse_preset
from stepswitch.util.config_model import first_problem
from stepswitch.util.secrets import bearer_headers, redact
from stepswitch.util.toml import parse_toml

# Listings quote dollars per token; presets store dollars per million tokens.
_PER_MILLION = Decimal(1_000_000)
# A model that is listed but absent from the preset: reported, never added.
NOT_IN_PRESET = "(not in preset)"
# Price fields a refresh rewrites, in the order the CLI shows them.
_FIELDS = ("input", "cached_input", "cache_write", "output")
# Keep the body in errors short: enough to see what came back, not a whole catalogue.
_RAW_LIMIT = 4000

PriceValue = float | str | None


@dataclass(frozen=True)
class PriceChange:
    """One difference between the preset and the listing; `old`/`new` are $ per million tokens."""

    model: str
    field: str  # "input", "cached_input", "cache_write", "output", or NOT_IN_PRESET
    old: PriceValue  # "unknown" when the preset had no price, None when the field was absent
    new: PriceValue

    @property
    def unlisted(self) -> bool:
        return self.field == NOT_IN_PRESET

    def __str__(self) -> str:
        if self.unlisted:
            return f"{self.model}: listed by the provider, not in the preset (not added)"
        old = "absent" if self.old is None else self.old
        new = "absent" if self.new is None else self.new
        return f"{self.model}: {self.field} {old} -> {new} $/1M tokens"


class _WirePricing(BaseModel):
    """OpenRouter-style pricing, decimal strings in $ per token; Token Factory sends the same."""

    model_config = ConfigDict(extra="ignore")

    prompt: Decimal | None = None
    completion: Decimal | None = None
    input_cache_read: Decimal | None = None
    input_cache_write: Decimal | None = None


class _WireModel(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    pricing: _WirePricing | None = None


class _WireListing(BaseModel):
    """`{"data": [...]}` as both Token Factory's verbose list and OpenRouter's /models send it."""

    model_config = ConfigDict(extra="ignore")

    data: list[_WireModel]


def prices_url(provider: ProviderSpec, base_url: str | None = None) -> str:
    if not provider.prices_endpoint:
        raise UsageError(
            f"provider {provider.name!r} (registry/providers/{provider.name}.toml) has no "
            "prices_endpoint; edit its prices by hand from the provider's pricing page"
        )
    base = (base_url or provider.base_url).rstrip("/")
    return f"{base}/{provider.prices_endpoint.lstrip('/')}"


def _scrub(text: str, api_key: str | None) -> str:
    # The key must never reach a message or a record, even if a server echoes it.
    return redact(text, (api_key or "",))


def _fetch(url: str, provider: ProviderSpec, api_key: str | None, http: httpx.Client) -> str:
    headers = {"Accept": "application/json", **bearer_headers(api_key)}
    try:
        response = http.get(url, headers=headers)
    except httpx.HTTPError as exc:
        reason = _scrub(f"{type(exc).__name__}: {exc}", api_key)
        raise ProviderError(f"{provider.name}: could not fetch {url}: {reason}") from None
    body = _scrub(response.text, api_key)[:_RAW_LIMIT]
    request_id = response.headers.get("x-request-id")
    if response.status_code in (401, 403):
        hint = f"check {provider.api_key_env}" if provider.api_key_env else "check the key"
        raise AuthError(
            f"{provider.name}: {url} refused the request (HTTP {response.status_code}); {hint}",
            status=response.status_code,
            raw_body=body,
            request_id=request_id,
        )
    if response.is_redirect:
        raise ProviderError(
            f"{provider.name}: {url} answered HTTP {response.status_code}, a redirect; not "
            "followed (the key is for this host alone): fix the preset's base_url",
            status=response.status_code,
            raw_body=body,
            request_id=request_id,
        )
    if response.status_code >= 400:
        raise ProviderError(
            f"{provider.name}: {url} answered HTTP {response.status_code}",
            status=response.status_code,
            raw_body=body,
            request_id=request_id,
        )
    return _scrub(response.text, api_key)


def _parse_listing(provider: ProviderSpec, url: str, text: str) -> _WireListing:
    try:
        return _WireListing.model_validate_json(text)
    except ValidationError as exc:
        raise ProviderError(
            f"{provider.name}: {url} sent a model list we cannot read "
            f"({first_problem(exc, '(body)')})",
            raw_body=text[:_RAW_LIMIT],
        ) from None


def _per_million(per_token: Decimal | None) -> float | None:
    if per_token is None:
        return None
    # normalize() drops the trailing zeros the multiplication leaves behind.
    return float((per_token * _PER_MILLION).normalize())


def _listed_price(pricing: _WirePricing | None) -> dict[str, float] | None:
    """The listing's price table in $/million, or None when the entry has no usable list price."""
    if pricing is None or pricing.prompt is None or pricing.completion is None:
        return None
    values = {
        "input": _per_million(pricing.prompt),
        "cached_input": _per_million(pricing.input_cache_read),
        "cache_write": _per_million(pricing.input_cache_write),
        "output": _per_million(pricing.completion),
    }
    present = {field: value for field, value in values.items() if value is not None}
    # Negative figures (OpenRouter's -1 for routed "auto" models) are not list prices.
    if any(value < 0 for value in present.values()):
        return None
    return present


def diff_price(model: str, old: Any, new: dict[str, float]) -> list[PriceChange]:
    """What changed from `old` ("unknown" or a price table) to the listed `new`."""
    changes = []
    for field in _FIELDS:
        before: PriceValue = old if isinstance(old, str) else old.get(field)
        after = new.get(field)
        if isinstance(old, str) and after is None:
            continue  # "unknown" to absent is not a change worth showing
        if before != after:
            changes.append(PriceChange(model, field, before, after))
    return changes


def read_listing(
    provider: ProviderSpec, url: str, api_key: str | None, http: httpx.Client | None = None
) -> dict[str, dict[str, float] | None]:
    """Model id -> its list price table in $/million from the priced model list at `url`
    (None for a listed model with no usable price)."""
    # A redirect is an error, not a second request: the key is for this URL's host alone.
    client = http or httpx.Client(timeout=30.0, follow_redirects=False)
    try:
        text = _fetch(url, provider, api_key, client)
    finally:
        if http is None:
            client.close()
    listing = _parse_listing(provider, url, text)
    return {entry.id: _listed_price(entry.pricing) for entry in listing.data}


def _write_validated(preset_file: Path, data: dict[str, Any], provider: ProviderSpec) -> None:
    text = tomli_w.dumps(data, indent=2)
    # Same folder as the preset, so the final rename is atomic on one filesystem.
    with tempfile.TemporaryDirectory(dir=preset_file.parent, prefix=".prices-") as tmp:
        staged = Path(tmp) / preset_file.name  # same name: parse_preset checks name == stem
        staged.write_text(text, encoding="utf-8")
        try:
            parse_preset(staged)
        except ConfigError as exc:
            raise ProviderError(
                f"{provider.name}: refreshed prices would not validate, preset left as it was: "
                f"{exc.key}: {exc}",
            ) from None
        os.replace(staged, preset_file)


def refresh_prices(
    provider: ProviderSpec,
    preset_file: Path,
    *,
    base_url: str | None = None,
    api_key: str | None,
    http: httpx.Client | None = None,
    today: date,
) -> list[PriceChange]:
    """Rewrite the price tables of the preset's listed models from the provider's price endpoint.

    Only `[models.X.price]` of models both in the preset and in the listing change; every other
    key stays. Listed models missing from the preset come back as NOT_IN_PRESET changes.
    """
    url = prices_url(provider, base_url)
    if preset_file.stem != provider.name:
        raise UsageError(f"{preset_file} is not the preset of provider {provider.name!r}")
    try:
        data = parse_toml(preset_file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(str(preset_file), "(file)", "no such preset", "run `ssw models`") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(preset_file), "(syntax)", str(exc), "fix the TOML syntax") from exc

    listing = read_listing(provider, url, api_key, http)

    models: dict[str, Any] = data.get("models", {})
    changes: list[PriceChange] = []
    for model_id, new in sorted(listing.items()):
        if model_id not in models:
            changes.append(PriceChange(model_id, NOT_IN_PRESET, None, None))
            continue
        if new is None:
            continue
        changes.extend(diff_price(model_id, models[model_id].get("price", "unknown"), new))
        models[model_id]["price"] = {**new, "source": url, "as_of": today}

    _write_validated(preset_file, data, provider)
    return changes
