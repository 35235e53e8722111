"""The bill of a two-turn Anthropic tool loop from its recorded usage: the first call writes the
prefix to the cache, the second reads it back, each at the preset's list price."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepswitch.ledger.pricing import cost_usd
from stepswitch.registry.presets import Price, get_model, load_registry
from stepswitch.wire.formats.messages import MessagesCodec
from stepswitch.wire.types import Usage

ROOT = Path(__file__).parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "messages"


def _usage(name: str) -> Usage:
    body = json.loads((FIXTURES / name).read_text())
    body.pop("_source")
    usage = MessagesCodec().decode(body, None).usage
    assert usage is not None
    return usage


def test_two_turn_bill_with_a_cache_write_then_a_read_matches_the_hand_computed_figure():
    model = get_model(load_registry(ROOT / "registry")["anthropic"], "claude-sonnet-5")
    price = model.price
    assert isinstance(price, Price)
    # $ per million tokens in registry/providers/anthropic.toml: the figures below use them.
    assert (price.input, price.cached_input, price.cache_write, price.output) == (
        2.0,
        0.2,
        2.5,
        10.0,
    )
    one, two = _usage("tool_loop_turn1_thinking.json"), _usage("tool_loop_turn2_answer.json")
    assert (one.uncached_prompt_tokens, one.cache_write_tokens, one.cached_tokens) == (12, 5200, 0)
    assert (two.uncached_prompt_tokens, two.cache_write_tokens, two.cached_tokens) == (9, 480, 5200)
    # Turn 1: 12 x $2 + 5200 x $2.50 (write) + 410 x $10 = $17,124 per million = $0.017124.
    # Turn 2: 9 x $2 + 5200 x $0.20 (read) + 480 x $2.50 (write) + 230 x $10 = $0.004558.
    assert cost_usd(price, one) == pytest.approx(0.017124)
    assert cost_usd(price, two) == pytest.approx(0.004558)
    assert cost_usd(price, one) + cost_usd(price, two) == pytest.approx(0.021682)
    # Without the cache both turns would pay the full input price for the whole prompt.
    uncached = (one.prompt_tokens + two.prompt_tokens) * 2.0 + (410 + 230) * 10.0
    assert uncached / 1e6 == pytest.approx(0.028202)  # (5212 + 5689) x $2 + 640 x $10
