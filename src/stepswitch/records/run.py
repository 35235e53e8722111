"""run.json, version 2: what a run was asked, with what, and how it ended. Paths in it are
relative to the repository it ran on, so a run folder means the same on any machine. Written
strictly, read leniently (`RunRecord.read`: records/base.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from stepswitch.records.base import Record
from stepswitch.records.money import CostRange
from stepswitch.records.steps import (
    SCHEMA_VERSION,
    Escalation,
    GateRecord,
    GateVerdicts,
    ModelStep,
    StepEvent,
)
from stepswitch.records.steps import ReviewVerdict as ReviewVerdict  # with the run's other types

# done: the gates passed and the review approved (or none is configured); gates_failed: the gates
# failed on every rung; rejected: the gates passed but the reviewer rejected the change on every
# rung; no_change: no edit changed a file; limit: steps, time, dollars or the last rung's steps
# ran out; interrupted: Ctrl-C or SIGTERM; harness_error: a bug or breakage in ssw itself; error: a
# provider or model failure that ended the run.
Outcome = Literal[
    "done",
    "gates_failed",
    "rejected",
    "no_change",
    "limit",
    "interrupted",
    "harness_error",
    "error",
]

# passed: the last gate run passed; failed: it failed; none: the project has no gate, so none
# ran; not_run: the run ended before its first gate run.
GatesVerdict = Literal["passed", "failed", "not_run", "none"]


class RunIds(Record):
    """Who a run is: itself, and where it belongs in a bench (empty for a lone `ssw run`)."""

    run_id: str
    task_id: str
    bench_id: str | None = None
    contestant: str | None = None
    attempt: int = 0


class ChangedFile(Record):
    path: str
    added: int | None = None  # lines; None for a binary file
    deleted: int | None = None


class Totals(Record):
    steps: int = 0  # model calls
    escalations: int = 0
    gate_failures: int = 0
    model_output_failures: int = 0  # prose for a tool call, cut-off thinking, unparsed reviews
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost: CostRange = CostRange()  # high counts calls whose usage was lost at their bound
    unpriced_steps: int = 0
    by_worker: dict[str, CostRange] = Field(default_factory=dict)
    # The ledger's range for the run at its end, calls in flight included; None: not read.
    ledger: CostRange | None = None

    def with_ledger(self, ledger: CostRange) -> Totals:
        """These totals checked against the ledger: `cost` covers every dollar it holds."""
        return self.model_copy(update={"ledger": ledger, "cost": self.cost.covering(ledger)})


def totals_of(events: Iterable[StepEvent]) -> Totals:
    """A run's totals, from the events it recorded and nothing else: run.json cannot count a
    step, a token or a dollar that steps.jsonl lacks."""
    t = Totals()
    for e in events:
        if isinstance(e, Escalation):
            t.escalations = max(t.escalations, e.to_level)
        elif isinstance(e, GateVerdicts):
            t.gate_failures += not e.passed
        elif isinstance(e, ModelStep):
            t.steps += 1
            t.model_output_failures += e.model_output_failure is not None
            t.prompt_tokens += e.prompt_tokens
            t.cached_tokens += e.cached_tokens
            t.cache_write_tokens += e.cache_write_tokens
            t.completion_tokens += e.completion_tokens
            t.reasoning_tokens += e.reasoning_tokens
            if e.cost is None:
                t.unpriced_steps += 1
            else:
                t.cost = t.cost + e.cost
                t.by_worker[e.worker] = t.by_worker.get(e.worker, CostRange()) + e.cost
    return t


class PricesRead(Record):
    """Prices this run read from a provider's model list before its first call, because the
    preset had none for a model it uses (`prices` holds the figures, per worker)."""

    provider: str
    url: str  # the model list they came from
    at: str  # when, UTC, ISO 8601 to the second


class TierMemory(Record):
    """Where tier memory started the run (agent/tier_memory.py): the rung, the earlier runs it
    read (most recent first) and the rung each needed, and why, in words."""

    level: int = 0
    runs: list[str] = Field(default_factory=list)
    levels: list[int] = Field(default_factory=list)
    why: str = ""


class RunRecord(Record):
    schema_version: int = SCHEMA_VERSION
    ids: RunIds
    task: str
    branch: str
    worktree: str  # relative to the repository ("." when the run worked in the checkout itself)
    base_commit: str
    ssw_version: str
    policy_path: str  # as given; relative to the repository when inside it
    policy_sha256: str
    policy: dict[str, Any]  # the policy as loaded, so the run can be read without the file
    # --max-steps/--budget-usd as given, and the policy before them (None: no flag changed it).
    policy_flags: dict[str, Any] = Field(default_factory=dict)
    policy_before_flags: dict[str, Any] | None = None
    prices: dict[str, dict[str, Any] | None] = Field(default_factory=dict)  # worker -> list price
    prices_read: list[PricesRead] = Field(default_factory=list)  # from a model list, for this run
    scripted: bool = False
    simulated: bool = False  # a worker is on the simulated population (scripted too)
    allow_dirty: bool = False
    continues: str | None = None  # `ssw run --continue ID`: the earlier run it went on from
    tier_memory: TierMemory | None = None  # None: off ([escalation] memory), or a bench's run
    tags: dict[str, str] = Field(default_factory=dict)
    started_at: str
    finished_at: str | None = None
    elapsed_s: float | None = None
    outcome: Outcome | Literal["running"] = "running"
    exit_code: int | None = None
    reason: str = ""
    # A harness_error's traceback, no machine path in it (records/crash.py); None otherwise.
    traceback: str | None = None
    baseline_gates: list[GateRecord] = Field(default_factory=list)  # before any edit or call
    gates_verdict: GatesVerdict = "not_run"
    review_verdict: ReviewVerdict | None = None
    totals: Totals = Field(default_factory=Totals)
    changed_files: list[ChangedFile] = Field(default_factory=list)
    commit: str | None = None
    # The scope of the budget (the ledger's Scope) that refused the call the run stopped on;
    # None for any other end. Not written: run.json says it in `reason`, as it always did.
    budget_stop: Literal["task", "run", "bench"] | None = Field(default=None, exclude=True)

    @property
    def run_id(self) -> str:
        return self.ids.run_id

    @property
    def cost(self) -> CostRange:
        return self.totals.cost
