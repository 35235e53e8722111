"""Each worker's model and price for a run, any model id on any endpoint (ADR 0061). A worker's
price is the one given on the command line, else the one in force for the host its calls go to
(the user's price cache, else the preset: registry/in_force.py), else the one that host's priced
model list gives when the key is set (read now, kept in the cache). A model id the preset does
not list is accepted when it is priced so. What is left unpriced is refused here, before the
first paid call, in one line naming the one thing to do."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

from stepswitch.agent.workers import unpriced_fix
from stepswitch.errors import ConfigError, UsageError
from stepswitch.policy.model import Policy
from stepswitch.registry.first_use import PricesReading, can_read_prices, read_prices
from stepswitch.registry.in_force import price_in_force, unlisted_model, with_models
from stepswitch.registry.presets import ModelSpec, Price, ProviderSpec
from stepswitch.registry.price_cache import CachedPrices, read_cached
from stepswitch.registry.trust import Origin, Trust, origin_of

PRICE_FLAG = "--price-usd-per-mtok"
PRICE_METAVAR = "IN,OUT"
_PRICE_FIX = (
    f"pass {PRICE_FLAG} {PRICE_METAVAR}, its US dollars per million input and output tokens"
)


# A preset whose base_url is on the reserved `.invalid` domain (RFC 6761: it never resolves, and
# no certificate names it) has no address of its own: `openai-compatible` takes the user's.
_NO_ADDRESS = ".invalid"


def check_addresses(policy: Policy, registry: Mapping[str, ProviderSpec]) -> None:
    """A UsageError for a worker on a preset with no address of its own and none given."""
    for name, worker in policy.workers.items():
        spec = registry.get(worker.provider)
        if spec is None or worker.base_url is not None:
            continue
        if origin_of(spec.base_url).host.endswith(_NO_ADDRESS):
            given = "--base-url URL" if policy.in_memory else f"base_url in workers.{name}"
            raise UsageError(
                f"{policy.source}: {spec.name} has no address of its own: give its URL with "
                f"{given}, e.g. https://api.example.com/v1/"
            )


def given_price(value: str, today: date) -> Price:
    """`--price-usd-per-mtok IN,OUT` as a price; a UsageError when it is not two dollar figures."""
    parts = [p.strip() for p in value.split(",")]
    try:
        figures = [float(p) for p in parts]
    except ValueError:
        figures = []
    if len(figures) != 2 or any(not f >= 0 or f == float("inf") for f in figures):
        raise UsageError(
            f"{PRICE_FLAG} {value!r}: give input and output dollars per million tokens, "
            "e.g. 0.2,0.6"
        )
    source = f"{PRICE_FLAG} (given on the command line)"
    return Price(input=figures[0], output=figures[1], source=source, as_of=today)


@dataclass(frozen=True)
class _Target:
    """A worker whose price this module decides."""

    name: str
    spec: ProviderSpec
    model: str
    base_url: str | None  # the worker's own, None: the preset's
    origin: Origin  # where its calls go

    @property
    def at(self) -> tuple[str, Origin]:
        return self.spec.name, self.origin


def _targets(
    policy: Policy, registry: Mapping[str, ProviderSpec], given: Price | None
) -> list[_Target]:
    found = []
    for name, worker in policy.workers.items():
        spec = registry.get(worker.provider)
        if spec is None:
            continue  # an unknown provider is refused by name (worker_models)
        if spec.any_model and given is None:
            continue  # a local server: every model id, free
        origin = origin_of(worker.base_url or spec.base_url)
        found.append(_Target(name, spec, worker.model, worker.base_url, origin))
    return found


def _one_model(policy: Policy) -> None:
    used = sorted({f"{w.provider}:{w.model}" for w in policy.workers.values()})
    if len(used) > 1:
        raise UsageError(
            f"{PRICE_FLAG} prices one model, and this policy uses {len(used)} "
            f"({', '.join(used)}); give it with --model PROVIDER:MODEL_ID"
        )


@dataclass
class _Prices:
    """Each target's price, and what the cache holds per provider and host."""

    cached: dict[tuple[str, Origin], CachedPrices | None] = field(default_factory=dict)
    read: list[PricesReading] = field(default_factory=list)

    def cache_at(self, target: _Target) -> CachedPrices | None:
        if target.at not in self.cached:
            self.cached[target.at] = read_cached(*target.at)
        return self.cached[target.at]

    def price(self, target: _Target, given: Price | None) -> Price | None:
        if given is not None:
            return given
        return price_in_force(target.spec, target.model, target.origin, self.cache_at(target))


def _overlaid(
    registry: Mapping[str, ProviderSpec], targets: list[_Target], prices: dict[str, Price | None]
) -> dict[str, ProviderSpec]:
    """The presets as this run's calls see them: each target's model at its price."""
    models: dict[str, dict[str, tuple[ModelSpec, _Target]]] = {}
    for target in targets:
        price = prices[target.name]
        listed = target.spec.models.get(target.model)
        if listed is None:
            model = unlisted_model(target.model, price or "unknown")
        else:
            model = listed if price is None else listed.model_copy(update={"price": price})
        earlier = models.setdefault(target.spec.name, {}).get(target.model)
        if earlier is not None and earlier[0].price != model.price:
            other = earlier[1]
            raise UsageError(
                f"workers.{other.name} and workers.{target.name} call {target.spec.name} "
                f"{target.model} at {other.origin} and at {target.origin}, whose prices differ; "
                "one run bills a model at one price: send them to one host"
            )
        models[target.spec.name][target.model] = (model, target)
    out = dict(registry)
    for provider, chosen in models.items():
        out[provider] = with_models(registry[provider], {m: c[0] for m, c in chosen.items()})
    return out


def in_force(
    policy: Policy, registry: Mapping[str, ProviderSpec], given: Price | None = None
) -> dict[str, ProviderSpec]:
    """The presets with each worker's model at its price in force (cache, else preset) for the
    host its calls go to; nothing is read, nothing refused (`ssw policy check`)."""
    targets = _targets(policy, registry, given)
    known = _Prices()
    return _overlaid(registry, targets, {t.name: known.price(t, given) for t in targets})


@dataclass(frozen=True)
class PricedWorkers:
    registry: dict[str, ProviderSpec]  # the presets as this run's calls see them
    read: list[PricesReading]  # the model lists read for it


def price_workers(
    policy: Policy,
    registry: Mapping[str, ProviderSpec],
    env: Mapping[str, str],
    trust: Trust,
    given: Price | None = None,
) -> PricedWorkers:
    """Every worker priced for the host its calls go to, reading a priced model list where one
    is needed and the key is set; a ConfigError naming the fix for a model left unpriced
    (unless the policy allows unpriced models)."""
    if given is not None:
        _one_model(policy)
    targets = _targets(policy, registry, given)
    known = _Prices()
    prices = {t.name: known.price(t, given) for t in targets}
    allow = policy.ledger.allow_unpriced
    missing: dict[tuple[str, Origin], list[_Target]] = {}
    for target in targets:
        if prices[target.name] is None and not allow and can_read_prices(target.spec, env):
            missing.setdefault(target.at, []).append(target)
    for at, waiting in missing.items():
        first = waiting[0]
        reading = read_prices(first.spec, first.base_url, [t.model for t in waiting], env, trust)
        known.cached[at] = reading.cached
        known.read.append(reading)
        prices.update({t.name: known.price(t, given) for t in waiting})
    if not allow:
        _refuse_unpriced(policy, targets, prices, known, env)
    return PricedWorkers(_overlaid(registry, targets, prices), known.read)


def _refuse_unpriced(
    policy: Policy,
    targets: list[_Target],
    prices: dict[str, Price | None],
    known: _Prices,
    env: Mapping[str, str],
) -> None:
    for target in targets:
        if prices[target.name] is not None:
            continue
        spec = target.spec
        problem = f"{spec.name} {target.model} has no known price for calls to {target.origin}"
        cached = known.cached.get(target.at)
        if cached is not None:
            near = difflib.get_close_matches(target.model, list(cached.prices), n=1)
            problem += f" ({cached.url} prices no such model"
            problem += f"; it prices {near[0]})" if near else ")"
        elif target.model not in spec.models:
            problem += " (its preset does not list it)"
        one_model = len({(w.provider, w.model) for w in policy.workers.values()}) == 1
        key_missing = spec.prices_endpoint and not can_read_prices(spec, env)
        fix = _PRICE_FIX if one_model and not key_missing else unpriced_fix(spec, env)
        raise ConfigError(policy.source, f"workers.{target.name}", problem, fix)
