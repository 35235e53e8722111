"""Dollars from usage at list price: cached input at its rate, reasoning at the output rate."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING

from stepswitch.registry.presets import Price
from stepswitch.wire.types import Usage

if TYPE_CHECKING:
    from stepswitch.records.steps import ModelStep

PER_MILLION = 1_000_000


def cost_usd(price: Price, usage: Usage) -> float:
    """What the provider bills for one call. Reasoning tokens are inside completion_tokens."""
    cached_rate = price.input if price.cached_input is None else price.cached_input
    write_rate = price.input if price.cache_write is None else price.cache_write
    dollars = (
        usage.uncached_prompt_tokens * price.input
        + usage.cached_tokens * cached_rate
        + usage.cache_write_tokens * write_rate
        + usage.completion_tokens * price.output
    )
    return dollars / PER_MILLION


def step_usd(price: Price, step: ModelStep) -> float:
    """What a recorded model step costs at `price`, from the usage its record kept."""
    # A step record keeps each of Usage's counts under the same name.
    usage = Usage(**{f.name: getattr(step, f.name) for f in fields(Usage)})
    return cost_usd(price, usage)


def worst_case_usd(price: Price, prompt_tokens: int, max_output_tokens: int) -> float:
    """The most a call can cost: every prompt token uncached (or written), every output token."""
    input_rate = max(price.input, price.cache_write or 0.0)
    return (prompt_tokens * input_rate + max_output_tokens * price.output) / PER_MILLION
