"""Version 1 of run.json and steps.jsonl, kept only so that old run folders keep loading
(`records.folder.load_run` migrates them to version 2)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Outcome = Literal["done", "gates_failed", "limit", "error", "running"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")  # records written by newer versions still load


class ToolCallRecord(_Record):
    name: str
    arguments: str  # as the model sent them, cut to a bounded length
    ok: bool
    refused: bool = False
    exit_code: int | None = None  # run only
    output_excerpt: str = ""


class GateRecord(_Record):
    name: str
    passed: bool
    duration_s: float
    report: str = ""  # the short report the model sees


class ReviewRecord(_Record):
    verdict: Literal["approve", "reject", "unparsed"]
    reasons: str
    second_opinion: Literal["approve", "reject", "unparsed"] | None = None
    second_reasons: str = ""
    agree: bool | None = None


class StepRecord(_Record):
    schema_version: int = SCHEMA_VERSION
    run_id: str
    index: int  # 1-based, in the order the steps ran
    step_type: str
    worker: str
    provider: str
    model: str
    effort: str | None = None
    escalation: int = 0
    scripted: bool = False
    duration_s: float = 0.0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    usage_reported: bool = True
    cost_usd: float | None = None  # certain dollars; None: the model has no known price
    cost_high_usd: float | None = None  # set when usage was lost: the cost is cost_usd..this
    attempts: int = 0  # HTTP attempts, retries included (each is a ledger row)
    # Share of this prompt that repeats the previous prompt sent to the same worker, from its start.
    prompt_repeat_share: float = 0.0
    finish_reason: str | None = None
    request_id: str | None = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    model_output_failure: str | None = None
    gate: list[GateRecord] = Field(default_factory=list)
    # Time to the first test verdict and each stage's time (impacted, full), when gates ran.
    gate_timings: dict[str, float | bool | None] = Field(default_factory=dict)
    review: ReviewRecord | None = None
    note: str = ""
    error: str | None = None


class RunRecord(_Record):
    schema_version: int = SCHEMA_VERSION
    run_id: str
    repo: str
    branch: str
    worktree: str
    task: str
    policy: str
    scripted: bool = False
    started_at: str
    finished_at: str | None = None
    outcome: Outcome = "running"
    exit_code: int | None = None
    reason: str = ""
    steps: int = 0
    escalations: int = 0
    gate_failures: int = 0
    model_output_failures: int = 0  # prose instead of a tool call, cut-off thinking, empty stops
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0  # certain dollars
    cost_high_usd: float = 0.0  # the most it can have been, counting calls whose usage was lost
    unpriced_steps: int = 0
    tags: dict[str, str] = Field(default_factory=dict)
    commit: str | None = None
