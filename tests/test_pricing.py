from datetime import date

import pytest

from stepswitch.ledger.pricing import cost_usd, worst_case_usd
from stepswitch.registry.presets import Price
from stepswitch.wire.types import Usage

PRICE = Price(
    input=2.0, cached_input=0.2, cache_write=2.5, output=10.0, source="t", as_of=date(2026, 11, 29)
)


def test_cached_input_bills_at_the_cached_rate_and_writes_at_the_write_rate():
    usage = Usage(prompt_tokens=1_000_000, cached_tokens=600_000, cache_write_tokens=100_000)
    assert cost_usd(PRICE, usage) == pytest.approx(0.3 * 2.0 + 0.6 * 0.2 + 0.1 * 2.5)


def test_reasoning_tokens_bill_as_output_once():
    usage = Usage(completion_tokens=1_000_000, reasoning_tokens=800_000)
    assert cost_usd(PRICE, usage) == pytest.approx(10.0)


def test_without_a_cached_rate_cached_tokens_bill_as_input():
    price = Price(input=1.0, output=1.0, source="t", as_of=date(2026, 11, 29))
    assert cost_usd(
        price, Usage(prompt_tokens=1_000_000, cached_tokens=1_000_000)
    ) == pytest.approx(1.0)


def test_worst_case_assumes_nothing_cached_and_every_output_token():
    assert worst_case_usd(PRICE, 1_000_000, 100_000) == pytest.approx(2.5 + 1.0)
