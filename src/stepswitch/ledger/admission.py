"""The money types of admission control: budgets, what a call is, what it may cost."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from stepswitch.errors import RunStopped, UsageError
from stepswitch.ledger.pricing import worst_case_usd
from stepswitch.registry.presets import Price

Scope = Literal["task", "run", "bench"]
SCOPES: tuple[Scope, ...] = ("task", "run", "bench")
SCOPE_COLUMN: dict[Scope, str] = {"task": "task_id", "run": "run_id", "bench": "bench_id"}
_FLAG: dict[Scope, str] = {
    "task": "--budget-usd",
    "run": "the run's budget",
    "bench": "--budget-usd-total",
}

# Request-body bytes per prompt token, low so the estimate errs high. Measured (ADR 0007) with a
# digit-splitting tokenizer: English and code 3.8, a diff 3.1, JSON 2.8, TOML 2.6 bytes a token;
# only number- or hash-heavy text goes lower (to ~1), which calibration below then catches.
BYTES_PER_TOKEN = 2.0
# Once this model has settled prompts of at least CALIBRATE_MIN_BYTES, the lowest bytes a token
# seen, times CALIBRATE_MARGIN, replaces BYTES_PER_TOKEN when lower (never when higher).
CALIBRATE_MIN_BYTES = 2048
CALIBRATE_MARGIN = 0.9
MIN_BYTES_PER_TOKEN = 1.0  # every ASCII byte of the JSON body is at most one token


def estimate_prompt_tokens(prompt_bytes: int, bytes_per_token: float = BYTES_PER_TOKEN) -> int:
    """A conservative (high) prompt-token count from the request body's size."""
    ratio = max(MIN_BYTES_PER_TOKEN, min(BYTES_PER_TOKEN, bytes_per_token))
    return math.ceil(max(0, prompt_bytes) / ratio)


@dataclass(frozen=True)
class Budget:
    """A dollar cap on every call whose `scope` column (task_id, run_id, bench_id) is `key`."""

    scope: Scope
    key: str
    limit_usd: float

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise UsageError(f"unknown budget scope {self.scope!r}; use task, run or bench")
        limit = self.limit_usd
        if (
            isinstance(limit, bool)
            or not isinstance(limit, int | float)
            or not math.isfinite(limit)
            or limit <= 0
        ):
            raise UsageError(
                f"{_FLAG[self.scope]} must be a positive number of dollars, got {limit!r}"
            )

    def describe(self) -> str:
        return f"the {self.scope} budget ({self.key}) of ${self.limit_usd:g}"


@dataclass(frozen=True)
class CallIntent:
    """One provider call as admission control sees it, before any attempt leaves."""

    run_id: str
    task_id: str
    bench_id: str | None
    step: int
    step_type: str
    worker: str
    provider: str
    model: str
    price: Price | None  # None: the model has no known price (rows say "unpriced", never $0)
    max_output_tokens: int
    tags: dict[str, str] = field(default_factory=dict)
    budgets: tuple[Budget, ...] = ()
    # True when the policy goes on after lost usage: then lost-usage rows count at their high
    # bound. Open reservations always count at their full reservation.
    count_high_bounds: bool = True
    context_window: int | None = None  # caps the prompt estimate: no provider bills more

    def prompt_tokens(self, prompt_bytes: int, bytes_per_token: float) -> int:
        tokens = estimate_prompt_tokens(prompt_bytes, bytes_per_token)
        return tokens if self.context_window is None else min(tokens, self.context_window)

    def key(self, scope: Scope) -> str | None:
        return {"task": self.task_id, "run": self.run_id, "bench": self.bench_id}[scope]

    def worst_usd(self, prompt_tokens: int, output: bool = True) -> float:
        if self.price is None:
            return 0.0
        return worst_case_usd(self.price, prompt_tokens, self.max_output_tokens if output else 0)


@dataclass(frozen=True)
class Reservation:
    """An admitted attempt: its row is 'reserved' until settled."""

    row_id: int
    intent: CallIntent
    attempt: int
    prompt_bytes: int
    est_prompt_tokens: int
    reserved_usd: float


@dataclass(frozen=True)
class Spend:
    """Dollars against one scope key. low: certain; high: settled + open reservations + every
    lost-usage high bound. Unpriced calls are counted, never priced at $0."""

    low: float
    high: float
    unpriced_calls: int
    open_calls: int = 0
    lost_calls: int = 0

    def text(self) -> str:
        money = f"${self.low:.4f}" if self.low == self.high else f"${self.low:.4f}-${self.high:.4f}"
        return money + (f" + {self.unpriced_calls} unpriced" if self.unpriced_calls else "")


class BudgetExceeded(RunStopped):
    """The next attempt could pass a budget, so it never left the machine."""

    def __init__(self, budget: Budget, counted_usd: float, worst_usd: float) -> None:
        self.budget = budget
        self.counted_usd = counted_usd
        self.worst_usd = worst_usd
        super().__init__(
            "limit",
            f"refused a call before sending it: it could cost up to ${worst_usd:.4f}, and "
            f"{budget.describe()} already has ${counted_usd:.4f} counted against it "
            "(settled calls, open reservations and lost-usage bounds)",
        )
