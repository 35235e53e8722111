"""The cap holds under every fault, across processes sharing one ledger file.

Four worker processes call a fault-injecting loopback server through the real HttpProvider and
chat-completions codec, reserving and settling every attempt on one ledger under one bench cap.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.ledger import open_ledger

from .conftest import WORKER_SCRIPT, chat_body

BENCH = "bench-faults"
CAP = 3.2  # dollars; each call's worst case is ~$0.0062 (ADR 0013), a good reply ~$0.0009
WORKERS = 4
USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 80,
    "prompt_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 20},
    "completion_tokens_details": {"reasoning_tokens": 30},
}
MIX = (  # (kind, probability, reply)
    ("good", 0.40, Reply(body=chat_body(USAGE))),
    ("no_usage", 0.08, Reply(body=chat_body(None))),
    ("truncated", 0.08, Reply(body=chat_body(USAGE), truncate_to=40)),
    ("reset", 0.04, Reply(reset=True)),
    ("slow", 0.05, Reply(body=chat_body(USAGE), delay_s=1.0)),  # past the 0.25 s call timeout
    ("429", 0.15, Reply(429, {"error": "rate"}, {"Retry-After": "0"})),
    ("500", 0.15, Reply(500, {"error": "oops"})),
    ("400", 0.05, Reply(400, {"error": "bad"})),
)


class FaultResponder:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.kinds: Counter[str] = Counter()

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            roll = self._rng.random()
            for kind, chance, reply in MIX:  # noqa: B007 (the loop picks them)
                if roll < chance:
                    break
                roll -= chance
            self.kinds[kind] += 1
        return reply


def marker(request: RecordedRequest) -> str:
    return str(request.json()["messages"][0]["content"].split()[0])


@pytest.mark.slow
def test_the_cap_holds_and_every_sent_attempt_has_a_row(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    open_ledger(path).close()
    responder = FaultResponder(seed=5)
    began = time.monotonic()
    samples: list[float] = []
    with LoopbackServer(responder) as server, open_ledger(path) as watcher:
        procs = [
            subprocess.Popen(
                [sys.executable, str(WORKER_SCRIPT), "faults", json.dumps(config(path, server, n))],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(WORKERS)
        ]
        while any(p.poll() is None for p in procs) and time.monotonic() - began < 120:
            samples.append(watcher.spend("bench", BENCH).high)  # the cap holds at every moment
            time.sleep(0.05)
        outputs = [p.communicate(timeout=60) for p in procs]
        received = Counter(marker(r) for r in server.requests)
    duration = time.monotonic() - began
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err[-3000:]
    counts = [json.loads(out) for out, _ in outputs]

    with open_ledger(path) as ledger:
        assert ledger.recovered == []
        rows = ledger.rows()
        spend = ledger.spend("bench", BENCH)
    statuses = Counter(r.status for r in rows)
    sent = Counter(
        f"{r.worker}:{r.step}" for r in rows if r.status in ("settled", "error", "bound")
    )
    worst = max(r.reserved_usd for r in rows)
    print(
        f"\nfaults: {len(rows)} attempts ({dict(statuses)}) by {WORKERS} processes in "
        f"{duration:.1f} s; server saw {sum(received.values())} requests {dict(responder.kinds)}; "
        f"cap ${CAP} spend ${spend.low:.4f}-${spend.high:.4f}; worker counts {counts}"
    )

    assert len(rows) >= 1000
    assert sent == received  # every attempt that reached the server has exactly one row
    assert statuses["reserved"] == statuses["not_sent"] == 0
    assert {"settled", "error", "bound"} <= set(statuses)
    assert set(responder.kinds) == {kind for kind, _, _ in MIX}
    assert max(samples) <= CAP + 1e-9 and spend.high <= CAP + 1e-9
    assert spend.high > CAP - 2 * worst  # the cap was reached, not merely approached
    assert spend.low < spend.high and spend.lost_calls == statuses["bound"]
    assert all(r.usd is not None and r.usd <= r.reserved_usd for r in rows if r.status == "settled")
    assert sum(c["rows"] for c in counts) == len(rows)
    assert all(c["refused"] == 3 for c in counts)  # each worker stopped on BudgetExceeded
    assert duration < 90


def config(path: Path, server: LoopbackServer, n: int) -> dict[str, object]:
    return {
        "ledger": str(path),
        "base_url": server.base_url,
        "worker": f"w{n}",
        "bench": BENCH,
        "cap": CAP,
        "timeout": 0.25,
        "max_calls": 2000,
        "stop_after_refusals": 3,
    }
