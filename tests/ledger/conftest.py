"""Shared pieces for the ledger tests: a price, an intent factory, a fresh ledger, replies."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from stepswitch.ledger import Budget, CallIntent, CallTracker, Ledger, open_ledger
from stepswitch.ledger.pricing import worst_case_usd
from stepswitch.registry.presets import Price
from stepswitch.wire.client import HttpProvider, RetryPolicy
from stepswitch.wire.open import codec_for
from stepswitch.wire.types import Attempt, Completion, FinishReason, Message, Request, Usage

PRICE = Price(
    input=2.0, cached_input=0.2, cache_write=2.5, output=10.0, source="t", as_of=date(2026, 11, 29)
)
WORKER_SCRIPT = Path(__file__).parent / "worker.py"
# A 3000-byte request: a bound of 4024 prompt tokens (a token a byte plus the 1024 allowance)
# at the write rate, plus 1000 output tokens: $0.02006.
WORST = worst_case_usd(PRICE, 4024, 1000)


def intent(**changes: Any) -> CallIntent:
    base = CallIntent(
        run_id="run-1",
        task_id="task-1",
        bench_id="bench-1",
        step=1,
        step_type="edit",
        worker="coder",
        provider="prov",
        model="model-a",
        price=PRICE,
        max_output_tokens=1000,
        tags={"team": "core"},
        budgets=(),
        count_high_bounds=True,
    )
    return replace(base, **changes)


def budget(scope: str, limit: float, key: str | None = None) -> Budget:
    keys = {"task": "task-1", "run": "run-1", "bench": "bench-1"}
    return Budget(scope, key or keys[scope], limit)  # type: ignore[arg-type]


def completion(usage: Usage | None, finish: FinishReason = FinishReason.STOP) -> Completion:
    return Completion(Message("assistant", "ok"), finish, "stop", usage, "model-a", "req-1")


def ok(usage: Usage | None, number: int = 1) -> Attempt:
    return Attempt(number, 200, None, 0.25, "req-1", completion(usage))


def chat_body(usage: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "model-a",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def tracked_call(
    ledger: Ledger,
    base_url: str,
    request: Request,
    call: CallIntent,
    wire_format: str = "chat-completions",
) -> CallTracker:
    """`request` sent once (no retry) to the `wire_format` server at `base_url`, tracked in
    `ledger` as `call`; the tracker, after it settled or failed."""
    provider = HttpProvider(codec_for(wire_format), base_url, api_key="k", retry=RetryPolicy(1))
    tracker = CallTracker(ledger, call)
    try:
        with tracker:
            provider.complete(request, deadline=time.monotonic() + 30, hooks=tracker.hooks)
    finally:
        provider.close()
    return tracker


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / ".ssw" / "ledger.sqlite"


@pytest.fixture
def ledger(ledger_path: Path) -> Iterator[Ledger]:
    with open_ledger(ledger_path) as opened:
        yield opened
