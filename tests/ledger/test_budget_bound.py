"""The reservation is a true upper bound (ADR 0013): a prompt is at most a token a byte of the
request body plus a fixed allowance, a completion at most its cap. A provider that bills more
leaves a row that says by how much and why; a call that does not fit says what does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.ledger import (
    PROMPT_ALLOWANCE_TOKENS,
    BudgetExceeded,
    CallTracker,
    Ledger,
    ledger_command,
    report,
)
from stepswitch.ledger.pricing import worst_case_usd
from stepswitch.wire.types import Message, Request, Usage

from .conftest import PRICE, budget, chat_body, intent, ok, tracked_call

TEXT = "Fix calc/ops.py: mean divides by one value too many. " * 40  # ~2 kB of prompt
REQUEST = Request(model="model-a", messages=(Message("user", TEXT),), max_output_tokens=1000)


class Billing:
    """A provider that bills from the request it got: `prompt` tokens per body byte plus
    `hidden` (a system prompt of its own), every one a cache write (the dearest input rate),
    and `completion` times the max_tokens it was sent."""

    def __init__(self, prompt: float = 1.0, completion: float = 1.0, hidden: int = 0) -> None:
        self.prompt, self.completion, self.hidden = prompt, completion, hidden
        self.bodies: list[int] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        self.bodies.append(len(request.body))
        prompt = int(len(request.body) * self.prompt) + self.hidden
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": int(request.json()["max_tokens"] * self.completion),
            "prompt_tokens_details": {"cache_write_tokens": prompt},
        }
        return Reply(body=chat_body(usage))


def call(ledger: Ledger, base_url: str, **changes: Any) -> CallTracker:
    return tracked_call(ledger, base_url, REQUEST, intent(**changes))


# --- the bound holds for what the issue saw pass the cap ---


def test_a_provider_billing_a_token_per_prompt_byte_and_the_whole_cap_stays_inside_it(ledger):
    billing = Billing(prompt=1.0, completion=1.0, hidden=PROMPT_ALLOWANCE_TOKENS)
    with LoopbackServer(billing) as server:
        [row] = call(ledger, server.base_url).rows
    assert row.prompt_bytes == billing.bodies[0]
    assert row.prompt_tokens == row.est_prompt_tokens == row.prompt_bytes + PROMPT_ALLOWANCE_TOKENS
    assert row.cache_write_tokens == row.prompt_tokens
    assert row.completion_tokens == row.max_output_tokens == 1000
    assert row.usd == pytest.approx(row.reserved_usd)  # the whole bound, and not a cent more
    assert (row.over_usd, row.overrun, row.over_reservation) == (None, None, False)


def test_a_completion_above_its_cap_is_a_row_over_its_reservation_saying_by_how_much(ledger):
    billing = Billing(prompt=1.0, completion=1.28, hidden=PROMPT_ALLOWANCE_TOKENS)
    with LoopbackServer(billing) as server:
        [row] = call(ledger, server.base_url).rows
    assert row.status == "settled" and row.completion_tokens == 1280
    assert row.usd is not None and row.over_usd == pytest.approx(row.usd - row.reserved_usd)
    assert row.over_usd == pytest.approx(280 * 10.0 / 1e6)  # 280 tokens at the output rate
    assert row.overrun == "1,280 completion tokens billed for a cap of 1,000 (max_output_tokens)"
    assert row.overrun_text() == (
        f"prov model-a billed ${row.usd:.4f} for step 1 (edit), ${row.over_usd:.4f} more than "
        f"the ${row.reserved_usd:.4f} reserved for it: {row.overrun}"
    )


def test_prompt_tokens_above_the_body_bound_are_named_with_the_bound(ledger):
    billing = Billing(prompt=2.0, completion=1.0)
    with LoopbackServer(billing) as server:
        [row] = call(ledger, server.base_url).rows
    body = billing.bodies[0]
    assert row.over_reservation
    assert row.overrun == (
        f"{2 * body:,} prompt tokens billed for a bound of {body + 1024:,} "
        f"({body:,} request bytes + 1,024)"
    )


def test_reasoning_inside_an_overlong_completion_is_named(ledger):
    reservation = ledger.reserve(intent(), 1, 3000)
    usage = Usage(
        prompt_tokens=4024, cache_write_tokens=4024, completion_tokens=1500, reasoning_tokens=900
    )
    row = ledger.settle(reservation, ok(usage))
    assert row.overrun == (
        "1,500 completion tokens billed, 900 of them reasoning, for a cap of 1,000 "
        "(max_output_tokens)"
    )


def test_usage_past_one_bound_but_inside_the_reservation_is_not_an_overrun(ledger):
    """The cap is in dollars: output left unused pays for a prompt above its bound."""
    reservation = ledger.reserve(intent(), 1, 3000)
    row = ledger.settle(reservation, ok(Usage(prompt_tokens=6000, completion_tokens=10)))
    assert row.usd is not None and row.usd < row.reserved_usd and not row.over_reservation


def test_a_call_at_exactly_its_bounds_is_not_over(ledger):
    reservation = ledger.reserve(intent(), 1, 3000)
    usage = Usage(prompt_tokens=4024, cache_write_tokens=4024, completion_tokens=1000)
    row = ledger.settle(reservation, ok(usage))
    assert row.usd == pytest.approx(row.reserved_usd) and not row.over_reservation


def test_against_an_over_reporting_provider_the_cap_is_passed_by_at_most_one_call(ledger):
    """The session's rule at the ledger: stop at the first call over its reservation."""
    cap = 0.2
    limited = {"budgets": (budget("task", cap),)}
    with LoopbackServer(Billing(prompt=3.0, completion=1.28)) as server:
        rows = []
        for step in range(1, 100):
            try:
                rows += call(ledger, server.base_url, step=step, **limited).rows
            except BudgetExceeded:
                break
            if rows[-1].over_reservation:
                break
    spend = ledger.spend("task", "task-1")
    over = rows[-1]
    assert len(rows) == 1 and over.over_reservation  # the first call already broke the bound
    assert spend.high - over.reserved_usd == pytest.approx(over.over_usd)
    assert spend.high <= cap + (over.over_usd or 0.0)


def test_the_report_sums_what_calls_billed_above_their_reservations(ledger, ledger_path):
    for step in (1, 2):
        reservation = ledger.reserve(intent(step=step), 1, 30)  # a bound of 1,054 prompt tokens
        ledger.settle(reservation, ok(Usage(prompt_tokens=11_054, completion_tokens=10)))
    rows = ledger.rows()
    over = sum(r.over_usd or 0.0 for r in rows)
    assert over > 0 and over == pytest.approx(sum((r.usd or 0.0) - r.reserved_usd for r in rows))
    [group] = report(ledger, None, "model")
    assert group.over_reserved == 2 and group.over_usd == pytest.approx(over)
    assert f"2 call(s) cost more than their reservation, ${over:.4f} in all" in ledger_command(
        ledger_path, None, "model", False
    )
    data = json.loads(ledger_command(ledger_path, None, "model", True))
    assert data["total"]["over_usd"] == pytest.approx(over)


# --- a call that does not fit: what fits, and what to change ---


def test_the_refusal_carries_the_largest_output_cap_that_fits(ledger):
    limit = 0.015  # the 3000-byte prompt's bound is $0.01006; ~494 output tokens fit
    with pytest.raises(BudgetExceeded) as info:
        ledger.reserve(intent(budgets=(budget("task", limit),)), 1, 3000)
    fits = info.value.fits_output_tokens
    assert fits is not None and 0 < fits < 1000
    assert worst_case_usd(PRICE, 4024, fits) <= limit < worst_case_usd(PRICE, 4024, fits + 1)
    assert info.value.lowered_cap is None  # no floor given: the caller does not lower
    reservation = ledger.reserve(
        intent(budgets=(budget("task", limit),), max_output_tokens=fits), 1, 3000
    )
    assert reservation.reserved_usd <= limit


def test_with_a_floor_the_refusal_offers_the_lowered_cap(ledger):
    limited = intent(budgets=(budget("task", 0.015),), min_output_tokens=256)
    with pytest.raises(BudgetExceeded) as info:
        ledger.reserve(limited, 1, 3000)
    assert info.value.lowered_cap == info.value.fits_output_tokens
    assert str(info.value).endswith(f"at most {info.value.fits_output_tokens:,} output tokens fit")


def test_what_fits_is_the_least_over_every_budget(ledger):
    two = (budget("task", 0.015), budget("bench", 0.013))
    with pytest.raises(BudgetExceeded) as info:
        ledger.reserve(intent(budgets=two), 1, 3000)
    assert info.value.budget.scope == "task"  # the first budget that would pass is named
    fits = info.value.fits_output_tokens
    assert fits is not None and worst_case_usd(PRICE, 4024, fits) <= 0.013


def test_under_the_floor_the_refusal_names_the_reservation_the_budget_and_the_settings(ledger):
    limited = intent(budgets=(budget("task", 0.015),), min_output_tokens=1000)
    with pytest.raises(BudgetExceeded) as info:
        ledger.reserve(limited, 1, 3000)
    error = info.value
    fits = error.fits_output_tokens
    assert error.lowered_cap is None and fits is not None and fits < 1000
    need = worst_case_usd(PRICE, 4024, 1000)  # nothing counted yet: the call at its floor
    assert str(error) == (
        f"refused a call before sending it: it could cost up to ${need:.4f}, and the task "
        "budget (task-1) of $0.015 already has $0.0000 counted against it (settled calls, open "
        "reservations and lost-usage bounds); prov model-a (edit step 1) reserves a bound of "
        "4,024 prompt tokens (3,000 request bytes + 1,024) and 1,000 output tokens at list "
        f"price; at most {fits:,} output tokens fit, under the floor of 1,000 ([limits] "
        f"min_output_tokens): raise --budget-usd (or [limits] budget_usd) to at least "
        f"${need:.4f}, or lower [limits] min_output_tokens to {fits:,}"
    )


def test_when_the_prompt_alone_does_not_fit_the_refusal_says_so(ledger):
    limited = intent(budgets=(budget("bench", 0.005),), min_output_tokens=256)
    with pytest.raises(BudgetExceeded) as info:
        ledger.reserve(limited, 1, 3000)
    assert info.value.fits_output_tokens == 0 and info.value.lowered_cap is None
    prompt, need = worst_case_usd(PRICE, 4024, 0), worst_case_usd(PRICE, 4024, 256)
    assert str(info.value).endswith(
        f"and its prompt alone could cost ${prompt:.4f}: raise --budget-usd-total to at least "
        f"${need:.4f}"
    )


def test_without_a_floor_the_refusal_suggests_the_workers_cap(ledger):
    with pytest.raises(BudgetExceeded) as info:
        ledger.reserve(intent(budgets=(budget("task", 0.015),)), 1, 3000)
    fits = info.value.fits_output_tokens
    assert str(info.value).endswith(f"or lower [workers.coder] max_output_tokens to {fits:,}")
