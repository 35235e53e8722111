"""A process that writes the shared ledger, for the multi-process tests (run with sys.executable).

    worker.py admit CONFIG_JSON    reserve and settle without a network, under a bench cap
    worker.py faults CONFIG_JSON   real calls through HttpProvider to a fault-injecting server
    worker.py hang CONFIG_JSON     a few good calls, then one the server never answers
    worker.py reserve-exit LEDGER  reserve one attempt and end without settling
    worker.py reserve-kill LEDGER  reserve a priced and a free attempt, then SIGKILL itself

Prints one JSON object of counts on stdout when it ends by itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from stepswitch.errors import ProviderError
from stepswitch.ledger import Budget, BudgetExceeded, CallIntent, CallTracker, Ledger, open_ledger
from stepswitch.registry.presets import Price
from stepswitch.wire.client import HttpProvider, RetryPolicy
from stepswitch.wire.formats.chat_completions import ChatCompletionsCodec
from stepswitch.wire.types import Attempt, Completion, FinishReason, Message, Request, Usage

PRICE = Price(
    input=2.0, cached_input=0.2, cache_write=2.5, output=10.0, source="t", as_of=date(2026, 11, 29)
)
FILLER = "Please fix the failing test in calc/ops.py; the mean is off by one. " * 8


def intent(cfg: dict[str, Any], step: int) -> CallIntent:
    worker = cfg["worker"]
    cap = cfg.get("cap")
    return CallIntent(
        run_id=f"run-{worker}",
        task_id=f"task-{worker}-{step}",
        bench_id=cfg.get("bench", "bench-1"),
        step=step,
        step_type="edit",
        worker=worker,
        provider="loopback",
        model="model-a",
        price=PRICE,
        max_output_tokens=cfg.get("max_output_tokens", 200),
        tags={"worker": worker},
        budgets=(Budget("bench", cfg.get("bench", "bench-1"), cap),) if cap else (),
        count_high_bounds=True,
    )


def request(worker: str, step: int, max_out: int) -> Request:
    text = f"{worker}:{step} {FILLER}"  # the server tells calls apart by the first word
    return Request(model="model-a", messages=(Message("user", text),), max_output_tokens=max_out)


def admit(cfg: dict[str, Any]) -> Counter[str]:
    rng = random.Random(cfg["seed"])
    counts: Counter[str] = Counter()
    ledger = open_ledger(Path(cfg["ledger"]))
    for step in range(cfg["calls"]):
        try:
            reservation = ledger.reserve(intent(cfg, step), 1, 600)
        except BudgetExceeded:
            counts["refused"] += 1
            continue
        counts["admitted"] += 1
        roll = rng.random()
        if roll < 0.05:
            counts["left_open"] += 1  # the process ends with it open: recovery's job
            continue
        if roll < 0.6:
            usage = Usage(prompt_tokens=rng.randint(19, 200), completion_tokens=rng.randint(0, 200))
            done = Completion(Message("assistant", "ok"), FinishReason.STOP, "stop", usage, "m")
            ledger.settle(reservation, Attempt(1, 200, None, 0.01, None, done))
        elif roll < 0.8:
            ledger.settle(reservation, Attempt(1, None, "timed out", 0.01, None))
        else:
            ledger.settle(reservation, Attempt(1, 429, "HTTP 429", 0.01, None))
    return counts


def faults(cfg: dict[str, Any]) -> Counter[str]:
    counts: Counter[str] = Counter()
    ledger = open_ledger(Path(cfg["ledger"]))
    retry = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.005)
    provider = HttpProvider(ChatCompletionsCodec(), cfg["base_url"], retry=retry)
    max_out = cfg.get("max_output_tokens", 200)
    for step in range(cfg["max_calls"]):
        tracker = CallTracker(ledger, intent(cfg, step))
        try:
            with tracker:
                provider.complete(
                    request(cfg["worker"], step, max_out),
                    deadline=time.monotonic() + 30,
                    timeout=cfg["timeout"],
                    hooks=tracker.hooks,
                )
            counts["answered"] += 1
        except BudgetExceeded:
            counts["refused"] += 1
        except ProviderError as exc:
            counts[type(exc).__name__] += 1
        counts["rows"] += len(tracker.rows)
        counts["lost_usage_calls"] += tracker.lost_usage
        if counts["refused"] >= cfg["stop_after_refusals"]:
            break
    provider.close()
    ledger.close()
    return counts


def hang(cfg: dict[str, Any]) -> Counter[str]:
    ledger: Ledger = open_ledger(Path(cfg["ledger"]))
    provider = HttpProvider(ChatCompletionsCodec(), cfg["base_url"], retry=RetryPolicy(1))
    counts: Counter[str] = Counter()
    for step in range(cfg["good_calls"] + 1):  # the last one is the call the server holds
        with CallTracker(ledger, intent(cfg, step)) as tracker:
            provider.complete(
                request(cfg["worker"], step, 200),
                deadline=time.monotonic() + 120,
                hooks=tracker.hooks,
            )
        counts["answered"] += 1
    return counts


def main(argv: list[str]) -> None:
    mode, arg = argv[1], argv[2]
    if mode == "reserve-exit":
        ledger = open_ledger(Path(arg))
        reservation = ledger.reserve(intent({"worker": "gone"}, 0), 1, 3000)
        print(json.dumps({"row_id": reservation.row_id, "pid": os.getpid()}), flush=True)
        os._exit(0)  # no settle, no close: as if the process died mid-call
    if mode == "reserve-kill":
        ledger = open_ledger(Path(arg))
        priced = ledger.reserve(intent({"worker": "paid"}, 0), 1, 3000)
        free = dataclasses.replace(intent({"worker": "free"}, 1), price=None)
        unpriced = ledger.reserve(free, 1, 3000)  # commits without an fsync (ADR 0074)
        print(json.dumps({"rows": [priced.row_id, unpriced.row_id]}), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    cfg = json.loads(arg)
    counts = {"admit": admit, "faults": faults, "hang": hang}[mode](cfg)
    print(json.dumps(dict(counts)), flush=True)


if __name__ == "__main__":
    main(sys.argv)
