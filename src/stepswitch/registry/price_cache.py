"""The user's price cache (ADR 0061): prices read from a provider's model list are kept per user,
never in an installed preset. One file per provider and origin (scheme, host, port): a price read
from a host applies only to calls that go to that host. Each price carries the list's URL and its
date. `$SSW_CACHE_DIR`, else `$XDG_CACHE_HOME/stepswitch`, else `~/.cache/stepswitch`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from stepswitch.errors import ConfigError, UsageError
from stepswitch.registry.presets import Price
from stepswitch.registry.trust import Origin
from stepswitch.util.config_model import Strict, validate

CACHE_VARIABLE = "SSW_CACHE_DIR"
_SCHEMA_VERSION = 1
_DELETE_IT = "delete it: it is a cache, and ssw reads the prices again when it needs them"


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where this user's cached prices live; read at each call (the tests point it elsewhere)."""
    env = os.environ if env is None else env
    if env.get(CACHE_VARIABLE):
        return Path(env[CACHE_VARIABLE])
    xdg = env.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"  # the XDG rule
    return base / "stepswitch"


class _Origin(Strict):
    scheme: str
    host: str
    port: int


class _CacheFile(Strict):
    """One provider's prices as one origin's model list gave them."""

    schema_version: int = _SCHEMA_VERSION
    provider: str
    origin: _Origin
    url: str  # the model list read
    read_at: datetime  # UTC
    prices: dict[str, Price]  # model id -> its price, `source` the URL, `as_of` the day read


@dataclass(frozen=True)
class CachedPrices:
    """What the cache holds for one provider at one origin."""

    provider: str
    origin: Origin
    url: str
    read_at: datetime
    prices: Mapping[str, Price]
    path: Path


def _file_name(origin: Origin) -> str:
    return f"{origin.scheme}_{quote(origin.host, safe='.-')}_{origin.port}.json"


def cache_path(provider: str, origin: Origin, root: Path | None = None) -> Path:
    return (root or cache_dir()) / "prices" / quote(provider, safe="-_") / _file_name(origin)


def _load(path: Path) -> CachedPrices:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(str(path), "(file)", exc.strerror or str(exc), _DELETE_IT) from None
    data = validate(_CacheFile, raw, str(path), fix=_DELETE_IT, from_json=True)
    origin = Origin(data.origin.scheme, data.origin.host, data.origin.port)
    return CachedPrices(data.provider, origin, data.url, data.read_at, data.prices, path)


def read_cached(provider: str, origin: Origin) -> CachedPrices | None:
    """The prices cached for `provider` at `origin`, or None when none were read there."""
    path = cache_path(provider, origin)
    if not path.is_file():
        return None
    cached = _load(path)
    if (cached.provider, cached.origin) != (provider, origin):  # a file moved by hand
        raise ConfigError(
            str(path), "provider", "is not the file's own provider and host", _DELETE_IT
        )
    return cached


def all_cached(provider: str) -> list[CachedPrices]:
    """Every origin's prices cached for `provider`, by origin."""
    folder = cache_dir() / "prices" / quote(provider, safe="-_")
    found = [_load(path) for path in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    return sorted((c for c in found if c.provider == provider), key=lambda c: c.origin)


def write_cached(
    provider: str, origin: Origin, url: str, read_at: datetime, prices: Mapping[str, Price]
) -> Path:
    """Keep one model list's prices for `provider` at `origin`, replacing what was read there
    before (atomically: a run reading the cache meanwhile sees the old file or the new one)."""
    path = cache_path(provider, origin)
    data = _CacheFile(
        provider=provider,
        origin=_Origin(scheme=origin.scheme, host=origin.host, port=origin.port),
        url=url,
        read_at=read_at,
        prices=dict(prices),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent, prefix=".prices-") as tmp:
            staged = Path(tmp) / path.name  # same folder: the rename is atomic
            staged.write_text(data.model_dump_json(indent=2), encoding="utf-8")
            os.replace(staged, path)
    except OSError as exc:
        raise UsageError(
            f"cannot write the price cache {path} ({exc.strerror or exc}); point "
            f"{CACHE_VARIABLE} at a folder you can write"
        ) from None
    return path
