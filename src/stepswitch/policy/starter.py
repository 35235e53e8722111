"""`ssw init`: a commented starter policy for one provider preset, its ladder chosen from the
registry: the small model finds, reads and summarises; the mid one edits, runs and triages; the
large one plans, reviews and takes over after gate failures (ADR 0032). A preset that names its
models' tiers gets the same ladder with or without prices; one that does not is ranked by list
price (ADR 0052)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from stepswitch.errors import UsageError
from stepswitch.registry.presets import ModelSpec, Price, ProviderSpec, resolve_effort

# Agent calls read far more than they write: a model's rank weighs input four times output.
_INPUT_WEIGHT = 4.0


@dataclass(frozen=True)
class Tier:
    """One rung of the starter ladder: the worker's name and what it asks of its model."""

    name: str
    steps: str  # for the comment above the worker
    effort: str
    max_output_tokens: int
    timeout: float


CHEAP = Tier("cheap", "finds files, reads them and summarises", "low", 8192, 120)
MID = Tier("mid", "edits, runs the tests and triages failures", "medium", 16384, 300)
LARGE = Tier(
    "large",
    "plans, reviews, and takes over after two gate failures or two rejected reviews",
    "high",
    32768,
    600,
)
SECOND = Tier(
    "second", "gives a second opinion on reviews, from another family", "high", 16384, 300
)


@dataclass(frozen=True)
class Ranked:
    """The preset's models a starter ladder may use, cheapest first, and how they were ranked."""

    models: tuple[str, ...]
    how: str  # one line for the file's header


def _weight(price: Price) -> float:
    return price.input * _INPUT_WEIGHT + price.output


def rank_models(spec: ProviderSpec) -> Ranked:
    """The models to build a ladder from, cheapest first: those that call tools (all of them
    when the preset names no capabilities), priced ones by list price; when none is priced, the
    preset's own order within its commonest family."""
    usable = {i: m for i, m in spec.models.items() if "tools" in m.capabilities}
    how = "by list price"
    if not usable:
        usable = dict(spec.models)
        how += "; the preset lists no tool calling, so every model is a candidate"
    if not usable:
        raise UsageError(f"provider {spec.name!r} lists no models: add one to its preset first")
    priced = {i: m.price for i, m in usable.items() if isinstance(m.price, Price)}
    if priced:
        order = sorted(priced, key=lambda i: _weight(priced[i]))  # stable: preset order on ties
        return Ranked(tuple(order), how)
    families = [m.family for m in usable.values()]
    common = max(families, key=families.count)
    order = [i for i, m in usable.items() if m.family == common]
    how = (
        f"in the preset's order ({common} models): no price is known yet; "
        f"after `ssw prices refresh {spec.name}`, `ssw init {spec.name} --force` ranks by price"
    )
    return Ranked(tuple(order), how)


def _second_opinion(
    spec: ProviderSpec, reviewer: str, ranked: Ranked, ladder: set[str]
) -> str | None:
    """A tool-calling model of another family than the reviewer's that has no rung of its own,
    if any. With tiers in the preset, the first such in its order (the same with or without
    prices); else the cheapest, priced unless no model of the ladder is priced either."""
    family = spec.models[reviewer].family
    others = {
        i: m
        for i, m in spec.models.items()
        if m.family != family
        and i not in ladder
        and ("tools" in m.capabilities or i in ranked.models)
    }
    if _tiered(spec):
        return next(iter(others), None)
    with_prices = any(spec.models[i].priced for i in ranked.models)
    pool = {i: m.price for i, m in others.items() if m.priced or not with_prices}
    if not pool:
        return None
    return min(pool, key=lambda i: _weight(p) if isinstance(p := pool[i], Price) else 0.0)


def _tiered(spec: ProviderSpec) -> bool:
    return any(m.tier is not None for m in spec.models.values())


_TIER_OF = {CHEAP: "small", MID: "mid", LARGE: "large"}


def choose_tiers(spec: ProviderSpec) -> tuple[Ranked, dict[Tier, str]]:
    """Which model each tier gets: the first model of the preset that names that tier (prices
    never change it), else the cheapest, middle and dearest of the models ranked by price."""
    ranked = rank_models(spec)
    order = ranked.models
    by_price = {CHEAP: order[0], MID: order[(len(order) - 1) // 2], LARGE: order[-1]}
    if not _tiered(spec):
        return ranked, by_price
    named = {
        tier: next((i for i, m in spec.models.items() if m.tier == name), by_price[tier])
        for tier, name in _TIER_OF.items()
    }
    how = "by the tier the preset names for each (prices shown, never deciding)"
    return Ranked(tuple(spec.models), how), named


def _q(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def _worker_lines(tier: Tier, provider: ProviderSpec, model_id: str) -> list[str]:
    model: ModelSpec = provider.models[model_id]
    cap = tier.max_output_tokens
    if model.max_output_tokens is not None:
        cap = min(cap, model.max_output_tokens)
    lines = [
        f"# {tier.name}: {tier.steps}.",
        f"[workers.{tier.name}]",
        f"provider = {_q(provider.name)}",
        f"model = {_q(model_id)}",
    ]
    effort = resolve_effort(model, tier.effort)
    if effort is not None:
        lines.append(f"effort = {_q(effort)}")
    timeout = 600 if provider.local else tier.timeout
    lines += [f"max_output_tokens = {cap}", f"timeout = {timeout:g}", ""]
    return lines


def _price_note(model: ModelSpec) -> str:
    price = model.price
    if isinstance(price, Price):
        return f"${price.input:g} in / ${price.output:g} out per 1M tokens"
    return "price unknown"


def starter_policy(provider: str, registry: Mapping[str, ProviderSpec]) -> str:
    """The text of a commented starter policy for `provider`; a UsageError naming the known
    providers when there is no such preset."""
    spec = registry.get(provider)
    if spec is None:
        raise UsageError(
            f"unknown provider {provider!r}; known providers: {', '.join(sorted(registry))}"
        )
    ranked, tiers = choose_tiers(spec)
    models = sorted(set(tiers.values()), key=ranked.models.index)
    one = len(models) == 1
    lines = [
        f"# A starter policy for {spec.display_name}, written by `ssw init {provider}`.",
        *textwrap.wrap(
            f"Models ranked {ranked.how}:", 96, initial_indent="# ", subsequent_indent="# "
        ),
        *(f"#   {i}: {_price_note(spec.models[i])}" for i in ranked.models),
        "# Edit it freely; `ssw policy check FILE` shows who takes each step, without a call.",
        "# The format: docs/decisions/0003-policy-format.md in the Stepswitch repository.",
        "",
    ]
    if one:
        main = Tier("main", "takes every step", MID.effort, MID.max_output_tokens, MID.timeout)
        lines += _worker_lines(main, spec, models[0])
        lines += ["[[rules]]", 'worker = "main"', "", "[escalation]", 'ladder = ["main"]', ""]
        reviewer = "main"
    else:
        for tier, model_id in tiers.items():
            lines += _worker_lines(tier, spec, model_id)
        lines += [
            "# First match wins. Cheap steps stay on `cheap` at every level.",
            "[[rules]]",
            'when = { step_type = ["navigate", "read", "summarize"] }',
            'worker = "cheap"',
            "",
            "[[rules]]",
            'when = { step_type = ["plan", "review"] }',
            'worker = "large"',
            "",
            "# Level 0 only: from level 1 the ladder (`large`) takes edits, runs and triage.",
            "[[rules]]",
            'when = { step_type = ["edit", "run", "triage"], escalations = 0 }',
            'worker = "mid"',
            "",
            "[escalation]",
            "after_gate_failures = 2",
            "after_review_rejections = 2",
            'ladder = ["mid", "large"]',
            "",
        ]
        reviewer = "large"
    second = _second_opinion(spec, tiers[LARGE], ranked, set(tiers.values()))
    if second is not None:
        lines += _worker_lines(SECOND, spec, second)
    lines += ["[limits]", "max_steps = 40", f"steps_per_rung = {40 if one else 15}"]
    lines.append("wall_time_s = 1800")
    if not spec.local:
        lines.append("# Stop before spending more than this on one task; raise it as you see fit.")
        lines.append("budget_usd = 2.0")
    lines += ["", "[review]", f"reviewer = {_q(reviewer)}"]
    if second is not None:
        lines.append('second_opinion = "second"')
    return "\n".join(lines) + "\n"
