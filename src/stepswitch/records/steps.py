"""steps.jsonl, version 2: one event per line, a discriminated union on `kind`, numbered by a
monotonic `seq`. Model steps, gate verdicts, review verdicts, escalations and the finish are each
their own shape; none pretends to be another. Written strictly, read leniently (records/base.py;
an event of a kind this ssw does not know is skipped by `records.folder.load_run`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from stepswitch.records.base import Record
from stepswitch.records.money import CostRange

SCHEMA_VERSION = 2
TEXT_CHARS = 4000  # of the assistant's text and of each tool output kept in a record
ARGUMENT_CHARS = 2000

# A review's verdict: "unparsed" when the reviewer's answer held none (it never approves).
ReviewVerdict = Literal["approve", "reject", "unparsed"]


def cut(text: str, limit: int = TEXT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[{len(text) - limit} chars cut]"


class ToolCallRecord(Record):
    name: str
    call_id: str = ""  # the id the model gave the call ("": not said, or an older record)
    arguments: str  # as the model sent them, cut to ARGUMENT_CHARS
    ok: bool
    refused: bool = False
    exit_code: int | None = None  # run only
    output: str = ""  # what the model was shown, cut to TEXT_CHARS


class GateRecord(Record):
    name: str
    passed: bool
    duration_s: float
    report: str = ""  # the short report the model sees


class ReviewRecord(Record):
    verdict: ReviewVerdict
    reasons: str
    second_opinion: ReviewVerdict | None = None
    second_reasons: str = ""
    agree: bool | None = None


class _Event(Record):
    schema_version: int = SCHEMA_VERSION
    # Stamped by `agent.events.Events.emit` as the event is emitted: the code that makes an
    # event leaves them as they are.
    run_id: str = ""
    seq: int = 0  # 1-based, in the order things happened in the run
    escalation: int = 0  # the ladder's level when it happened


class ModelStep(_Event):
    kind: Literal["model_step"] = "model_step"
    step: int  # 1-based count of model calls
    step_type: str
    worker: str
    provider: str
    model: str  # as requested
    served_model: str | None = None  # as the provider says it served (None: not said)
    served_other_model: bool = False  # the provider served a different model than requested
    effort: str | None = None
    scripted: bool = False
    simulated: bool = False  # a simulated model played it (stepswitch.sim; scripted too)
    duration_s: float = 0.0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    usage_reported: bool = True
    cost: CostRange | None = None  # None: the model has no known price
    attempts: int = 0  # HTTP attempts, retries included (each is a ledger row)
    # Share of this prompt that repeats the previous prompt sent to the same worker, from its start.
    prompt_repeat_share: float = 0.0
    finish_reason: str | None = None
    request_id: str | None = None  # the provider's id of the response (or of the request)
    max_output_tokens: int | None = None  # the output cap the call was sent with (last lowered)
    # Where the call went: the provider's host, and its port when the URL names one that is not
    # the scheme's default; None: not known (a provider that is no HTTP client of ssw's).
    server_address: str | None = None
    server_port: int | None = None
    text: str = ""  # the assistant's answer, cut to TEXT_CHARS (never its reasoning state)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    model_output_failure: str | None = None
    review: ReviewRecord | None = None  # on review steps: the verdict parsed from `text`
    note: str = ""
    error: str | None = None
    # The failed call's kind of error: the HTTP status when the provider answered with one,
    # else the exception's class name (OpenTelemetry's `error.type`).
    error_type: str | None = None
    # A fallback's step: the worker the step was routed to, and why it (and any fallback tried
    # before this one) failed (ADR 0038).
    fallback_from: str | None = None
    fallback_reason: str | None = None

    @property
    def outcome(self) -> str:
        """How the step ended, as the terminal says it: its error, its output failure, its
        tools' outcomes or its review's verdict."""
        if self.review is not None:
            return f"verdict {self.review.verdict}"
        tools = ", ".join(map(_tool_outcome, self.tool_calls))
        return self.error or self.model_output_failure or tools or self.note


def _tool_outcome(t: ToolCallRecord) -> str:
    if t.exit_code is not None:
        return f"{t.name} exit {t.exit_code}"
    return t.name + ("" if t.ok else " refused" if t.refused else " failed")


class GateVerdicts(_Event):
    kind: Literal["gates"] = "gates"
    passed: bool
    failed_gate: str | None = None
    gates: list[GateRecord] = Field(default_factory=list)
    # Time to the first test verdict and each stage's time (impacted, full).
    timings: dict[str, float | bool | None] = Field(default_factory=dict)

    @property
    def note(self) -> str:
        return "passed" if self.passed else f"failed: {self.failed_gate or '?'}"


class ReviewVerdicts(_Event):
    kind: Literal["review"] = "review"
    review: ReviewRecord


class Escalation(_Event):
    kind: Literal["escalation"] = "escalation"
    to_level: int
    to_worker: str
    reason: str
    # Which rule fired: the rung's gate failures, its own steps spent, or edits that changed
    # nothing; None in records written before the rule was recorded.
    rule: Literal["gate_failures", "rung_steps", "no_change", "review_rejections"] | None = None


class Finish(_Event):
    kind: Literal["finish"] = "finish"
    outcome: str
    reason: str
    exit_code: int
    commit: str | None = None


EVENT_TYPES = (ModelStep, GateVerdicts, ReviewVerdicts, Escalation, Finish)
StepEvent = Annotated[
    ModelStep | GateVerdicts | ReviewVerdicts | Escalation | Finish, Field(discriminator="kind")
]
# The `kind`s this ssw reads; a line of another kind was written by a newer ssw.
EVENT_KINDS = frozenset(str(t.model_fields["kind"].default) for t in EVENT_TYPES)
