"""summary.json, typed: `SummaryFile` and its parts (bench/summary.py makes it and says what each
figure is)."""

from __future__ import annotations

from typing import Literal

from stepswitch.bench.files.load import Ours
from stepswitch.bench.files.results import ContestantKind


class Interval(Ours):
    point: float | None
    low: float | None
    high: float | None
    resamples: int
    undefined: int = 0


class Bounds(Ours):
    low: float
    high: float


class Share(Ours):
    low: float
    high: float
    share: float | None


class GroupStats(Ours):
    task_runs: int
    passed: int
    pass_rate: float
    harness_errors: int
    outcomes: dict[str, int]
    dollars_total: Bounds
    dollars_per_task_run: Bounds
    dollars_per_passed_task: Bounds | None = None  # None: none passed, or an older summary
    not_done_dollars_share: float | None = None  # None: nothing spent, or an older summary
    unpriced_steps: int
    tokens_per_task_run: float
    cached_tokens_per_task_run: float
    uncached_tokens_per_task_run: float
    minutes_per_task_run: float
    steps_per_task_run: float
    escalations: int
    escalations_per_task_run: float
    refused_tool_calls: int
    model_output_failures: int
    served_other_model: int
    dollars_by_model: dict[str, Share]
    dollars_by_step_type: dict[str, Share]


class ContestantSummary(Ours):
    kind: ContestantKind
    label: str
    all: GroupStats
    suites: dict[str, GroupStats]


class Comparison(Ours):
    suite: str
    a: str
    b: str
    tasks: int
    pairs: int
    dollars_ratio: Interval
    dollars_ratio_high_bounds: Interval
    pass_rate_difference: Interval
    passed_only_by_a: list[str]
    passed_only_by_b: list[str]
    mcnemar_p: float


class Paired(Ours):
    a: str
    b: str
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    level: float
    n: int
    method: str


class Served(Ours):
    task: str
    contestant: str
    attempt: int
    requested_to_served: dict[str, str]


class Method(Ours):
    bootstrap: str
    resamples: int
    seed: int
    level: float
    mcnemar: str
    dollars: str


class SummaryFile(Ours):
    schema_version: Literal[1] = 1
    bench_id: str
    complete: bool
    planned_task_runs: int
    task_runs: int
    harness_errors: int
    method: Method
    contestants: dict[str, ContestantSummary]
    comparisons: list[Comparison]
    paired: list[Paired]
    served_other_model: list[Served]
