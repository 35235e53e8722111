"""Settled rows price usage by the rules: cached at the cached rate, cache writes at the write
rate, reasoning inside completion at the output rate, unpriced as NULL (never $0)."""

from __future__ import annotations

import sqlite3
from datetime import date

import pytest

from stepswitch.ledger import PROMPT_ALLOWANCE_TOKENS, Ledger, prompt_token_bound
from stepswitch.ledger.admission import PromptTooLong
from stepswitch.ledger.pricing import worst_case_usd
from stepswitch.registry.presets import Price
from stepswitch.wire.types import Usage

from .conftest import PRICE, intent, ok


def settle(ledger: Ledger, usage: Usage, price: Price | None = PRICE):
    reservation = ledger.reserve(intent(price=price), 1, 3000)
    return ledger.settle(reservation, ok(usage))


def test_cached_input_is_priced_at_the_cached_rate(ledger):
    row = settle(ledger, Usage(prompt_tokens=1_000_000, cached_tokens=600_000))
    assert row.status == "settled"
    assert row.usd == pytest.approx(0.4 * 2.0 + 0.6 * 0.2)
    assert (row.prompt_tokens, row.cached_tokens) == (1_000_000, 600_000)
    assert row.low_usd == row.high_usd == row.usd


def test_cache_writes_are_priced_at_the_write_rate(ledger):
    row = settle(ledger, Usage(prompt_tokens=1_000_000, cache_write_tokens=400_000))
    assert row.usd == pytest.approx(0.6 * 2.0 + 0.4 * 2.5)
    assert row.cache_write_tokens == 400_000


def test_reasoning_tokens_are_priced_once_at_the_output_rate(ledger):
    usage = Usage(prompt_tokens=1000, completion_tokens=1_000_000, reasoning_tokens=900_000)
    row = settle(ledger, usage)
    assert row.usd == pytest.approx(10.0 + 1000 * 2.0 / 1e6)
    assert (row.completion_tokens, row.reasoning_tokens) == (1_000_000, 900_000)


def test_cached_tokens_without_a_cached_rate_are_priced_as_input(ledger):
    plain = Price(input=1.0, output=3.0, source="t", as_of=date(2026, 11, 29))
    row = settle(ledger, Usage(prompt_tokens=1_000_000, cached_tokens=1_000_000), plain)
    assert row.usd == pytest.approx(1.0)


def test_unpriced_rows_store_null_dollars_never_zero(ledger, ledger_path):
    reservation = ledger.reserve(intent(price=None), 1, 3000)
    assert reservation.reserved_usd == 0.0
    row = ledger.settle(reservation, ok(Usage(prompt_tokens=500, completion_tokens=20)))
    assert row.status == "settled" and not row.priced
    assert row.usd is None and row.low_usd is None and row.high_usd is None
    assert row.dollars_text() == "unpriced"
    assert row.prompt_tokens == 500
    raw = sqlite3.connect(ledger_path).execute("SELECT usd, priced FROM calls").fetchone()
    assert raw == (None, 0)
    spend = ledger.spend("run", "run-1")
    assert (spend.low, spend.high, spend.unpriced_calls) == (0.0, 0.0, 1)
    assert "1 unpriced" in spend.text()


def test_the_reservation_is_the_list_price_worst_case_of_the_prompt_bound(ledger):
    reservation = ledger.reserve(intent(max_output_tokens=2000), 1, 30_001)
    assert reservation.est_prompt_tokens == 30_001 + 1024  # a token a byte, plus the allowance
    assert reservation.reserved_usd == pytest.approx(worst_case_usd(PRICE, 31_025, 2000))
    row = ledger.rows()[0]
    assert row.status == "reserved" and row.reserved_usd == reservation.reserved_usd
    assert row.price is not None and row.price["cached_input"] == 0.2


def test_the_prompt_bound_is_a_token_a_byte_plus_a_fixed_allowance():
    assert PROMPT_ALLOWANCE_TOKENS == 1024
    assert prompt_token_bound(0) == 1024
    assert prompt_token_bound(9) == 1033
    assert prompt_token_bound(-5) == 1024
    assert prompt_token_bound(9, context_window=1000) == 1000


def test_denser_prompts_seen_before_do_not_move_the_bound(ledger):
    dense = Usage(prompt_tokens=4400, completion_tokens=1)  # ~1 byte a token: numbers, hashes
    ledger.settle(ledger.reserve(intent(), 1, 4500), ok(dense))
    assert ledger.reserve(intent(), 2, 3000).est_prompt_tokens == 4024
    sparse = Usage(prompt_tokens=1000, completion_tokens=1)  # 4 bytes a token
    ledger.settle(ledger.reserve(intent(), 3, 4000), ok(sparse))
    assert ledger.reserve(intent(), 4, 3000).est_prompt_tokens == 4024


def test_a_prompt_whose_bound_passes_the_context_window_is_refused_before_any_row(ledger):
    with pytest.raises(PromptTooLong, match="context window of 1,000 tokens"):
        ledger.reserve(intent(context_window=1000), 1, 30_000)
    assert ledger.rows() == []
