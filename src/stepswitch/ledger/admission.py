"""The money types of admission control: budgets, what a call is, what it may cost."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from stepswitch.errors import RunStopped, UsageError
from stepswitch.ledger.pricing import worst_case_usd
from stepswitch.records.money import format_usd
from stepswitch.registry.presets import Price

Scope = Literal["task", "run", "bench"]
SCOPES: tuple[Scope, ...] = ("task", "run", "bench")
SCOPE_COLUMN: dict[Scope, str] = {"task": "task_id", "run": "run_id", "bench": "bench_id"}
_FLAG: dict[Scope, str] = {
    "task": "--budget-usd",
    "run": "the run's budget",
    "bench": "--budget-usd-total",
}
# What to raise when a budget refuses a call (ADR 0013).
_RAISE: dict[Scope, str] = {
    "task": "--budget-usd (or [limits] budget_usd)",
    "run": "the run's budget",
    "bench": "--budget-usd-total",
}

# Every prompt token is at least one byte of the request body: providers tokenize with
# byte-level BPE (or SentencePiece with byte fallback), and the body's JSON escaping only adds
# bytes. What the body does not carry (a hidden tool-use system prompt: Anthropic documents up
# to 530 tokens; chat-template markers) is covered by this allowance per call (ADR 0013).
PROMPT_ALLOWANCE_TOKENS = 1024
# The least output cap a refused call may be lowered to before it is refused instead; the
# policy's `[limits] min_output_tokens` once it has one (ADR 0013).
MIN_OUTPUT_TOKENS = 1024


def prompt_token_bound(prompt_bytes: int, context_window: int | None = None) -> int:
    """The most prompt tokens a provider can bill for a request body of `prompt_bytes`. The
    ledger refuses a body whose bound passes the window (PromptTooLong), so the cap by the
    window never lowers an admitted call's bound (ADR 0025)."""
    tokens = max(0, prompt_bytes) + PROMPT_ALLOWANCE_TOKENS
    return tokens if context_window is None else min(tokens, context_window)


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
    context_window: int | None = None  # a bound above it is refused before the call (ADR 0025)
    # The caller lowers a refused call's output cap to what fits, down to this floor (None:
    # it never lowers); the refusal then says what fits and what to change.
    min_output_tokens: int | None = None

    def prompt_tokens(self, prompt_bytes: int) -> int:
        return prompt_token_bound(prompt_bytes, self.context_window)

    def key(self, scope: Scope) -> str | None:
        return {"task": self.task_id, "run": self.run_id, "bench": self.bench_id}[scope]

    def worst_usd(self, prompt_tokens: int, output: bool = True) -> float:
        return self.worst_usd_with(prompt_tokens, self.max_output_tokens if output else 0)

    def worst_usd_with(self, prompt_tokens: int, output_tokens: int) -> float:
        if self.price is None:
            return 0.0
        return worst_case_usd(self.price, prompt_tokens, output_tokens)

    def fitting_output_tokens(self, prompt_tokens: int, limit_usd: float, counted: float) -> int:
        """The largest output cap (0 to max_output_tokens) whose worst case fits the budget."""
        if self.price is None or self.price.output <= 0:
            fits = counted + self.worst_usd_with(prompt_tokens, 0) <= limit_usd
            return self.max_output_tokens if fits else 0
        room = limit_usd - counted - self.worst_usd_with(prompt_tokens, 0)
        tokens = min(self.max_output_tokens, max(0, math.floor(room * 1e6 / self.price.output)))
        # The same comparison reserve() makes, so the cap found here is admitted there; the
        # division can land a token short of a worst case that fits exactly.
        while tokens > 0 and counted + self.worst_usd_with(prompt_tokens, tokens) > limit_usd:
            tokens -= 1
        while (
            tokens < self.max_output_tokens
            and counted + self.worst_usd_with(prompt_tokens, tokens + 1) <= limit_usd
        ):
            tokens += 1
        return tokens

    @property
    def floor(self) -> int | None:
        """The floor for this call: never above its own cap."""
        if self.min_output_tokens is None:
            return None
        return min(self.min_output_tokens, self.max_output_tokens)


@dataclass(frozen=True)
class Reservation:
    """An admitted attempt: its row is 'reserved' until settled."""

    row_id: int
    intent: CallIntent
    attempt: int
    prompt_bytes: int
    est_prompt_tokens: int  # the prompt bound (the column keeps its old name)
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
        money = format_usd(self.low, self.high)
        return money + (f" + {self.unpriced_calls} unpriced" if self.unpriced_calls else "")


class BudgetExceeded(RunStopped):
    """The next attempt could pass a budget, so it never left the machine.

    `fits_output_tokens` is the largest output cap that would fit every budget with this
    prompt (0: not even the prompt fits); `lowered_cap` is what the caller may retry with."""

    def __init__(
        self,
        budget: Budget,
        counted_usd: float,
        worst_usd: float,
        *,
        intent: CallIntent | None = None,
        prompt_bytes: int | None = None,
        prompt_tokens: int | None = None,
        fits_output_tokens: int | None = None,
    ) -> None:
        self.budget = budget
        self.counted_usd = counted_usd
        self.worst_usd = worst_usd
        self.intent = intent
        self.prompt_bytes = prompt_bytes
        self.prompt_tokens = prompt_tokens
        self.fits_output_tokens = fits_output_tokens
        super().__init__("limit", self._text())

    @property
    def lowered_cap(self) -> int | None:
        """The output cap to retry with, when the intent's floor allows one; else None."""
        floor = self.intent.floor if self.intent is not None else None
        fits = self.fits_output_tokens
        if floor is None or fits is None or fits <= 0 or fits < floor:
            return None
        return fits

    def _text(self) -> str:
        head = (
            f"refused a call before sending it: it could cost up to ${self.worst_usd:.4f}, and "
            f"{self.budget.describe()} already has ${self.counted_usd:.4f} counted against it "
            "(settled calls, open reservations and lost-usage bounds)"
        )
        intent, tokens, fits = self.intent, self.prompt_tokens, self.fits_output_tokens
        if intent is None or tokens is None or fits is None:
            return head
        who = f"{intent.provider} {intent.model} ({intent.step_type} step {intent.step})"
        sent, why = self.prompt_bytes, ""
        if sent is not None:
            from_bytes = tokens == sent + PROMPT_ALLOWANCE_TOKENS
            why = f" ({sent:,} request bytes + {PROMPT_ALLOWANCE_TOKENS:,})"
            why = why if from_bytes else " (the context window)"
        reservation = (
            f"{who} reserves a bound of {tokens:,} prompt tokens{why} and "
            f"{intent.max_output_tokens:,} output tokens at list price"
        )
        cap = f"[workers.{intent.worker}] max_output_tokens"
        raise_it = f"raise {_RAISE[self.budget.scope]}"
        floor = intent.floor
        if self.lowered_cap is not None:
            return f"{head}; {reservation}; at most {fits:,} output tokens fit"
        if fits <= 0:
            least = floor if floor is not None else intent.max_output_tokens
            need = self.counted_usd + intent.worst_usd_with(tokens, least)
            return (
                f"{head}; {reservation}, and its prompt alone could cost "
                f"${intent.worst_usd_with(tokens, 0):.4f}: {raise_it} to at least ${need:.4f}"
            )
        if floor is None:
            need = self.counted_usd + self.worst_usd
            return (
                f"{head}; {reservation}: {raise_it} to at least ${need:.4f}, or lower {cap} "
                f"to {fits:,}"
            )
        need = self.counted_usd + intent.worst_usd_with(tokens, floor)
        return (
            f"{head}; {reservation}; at most {fits:,} output tokens fit, under the floor of "
            f"{floor:,} ([limits] min_output_tokens): {raise_it} to at least ${need:.4f}, or "
            f"lower [limits] min_output_tokens to {fits:,}"
        )


class PromptTooLong(RunStopped):
    """The prompt's bound passes the model's context window: refused before it leaves, so a
    provider that bills what it received cannot bill past the reservation (ADR 0025)."""

    def __init__(self, intent: CallIntent, prompt_bytes: int) -> None:
        self.intent = intent
        self.prompt_bytes = prompt_bytes
        self.prompt_tokens = prompt_token_bound(prompt_bytes)
        window = intent.context_window
        super().__init__(
            "error",
            f"refused a call before sending it: {intent.provider} {intent.model} "
            f"({intent.step_type} step {intent.step}) has a context window of {window:,} "
            f"tokens, and this prompt could be up to {self.prompt_tokens:,} "
            f"({prompt_bytes:,} request bytes + {PROMPT_ALLOWANCE_TOKENS:,}): shorten the task "
            "or what the step reads, or route the step to a model with a larger window",
        )


def check_prompt_fits(intent: CallIntent, prompt_bytes: int) -> None:
    """Raise PromptTooLong when the prompt's bound (a token a byte, ADR 0013) passes the window."""
    window = intent.context_window
    if window is not None and prompt_token_bound(prompt_bytes) > window:
        raise PromptTooLong(intent, prompt_bytes)


class ProviderOverReported(RunStopped):
    """A settled call of this provider, in this bench (or run), billed more than it was sent
    with: every further call to it there is refused before it leaves (ADR 0025)."""

    def __init__(self, intent: CallIntent, evidence: str) -> None:
        self.intent = intent
        where = f"bench {intent.bench_id}" if intent.bench_id is not None else "this run"
        super().__init__(
            "limit",
            f"refused a call before sending it: {evidence}, so no further call goes to "
            f"{intent.provider} in {where} (its usage cannot be trusted to hold a budget)",
        )
