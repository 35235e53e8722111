"""Normalized types every codec speaks. The agent never sees a wire payload, only these."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from stepswitch.steps import StepType

Role = Literal["system", "user", "assistant", "tool"]
ToolChoice = Literal["auto", "required", "none"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model sent it

    def parsed_arguments(self) -> Any:
        """The arguments as JSON; raises ValueError when the model sent invalid JSON."""
        return json.loads(self.arguments) if self.arguments.strip() else {}


@dataclass(frozen=True)
class ReasoningState:
    """One assistant turn's reasoning state, in the provider's own shape, carried opaquely.

    Signed thinking blocks, encrypted reasoning items, thought signatures: only the codec of
    `wire_format` reads it, and only for a request to the same `model` through the same
    `provider` (ADR 0009). Neither repr nor str shows the payload, so no log line, exception
    message or record can carry it by accident.
    """

    wire_format: str
    model: str  # the model id asked for when the provider produced this state
    payload: str = field(repr=False)  # JSON text in the provider's own shape
    provider: str = ""  # the base URL it came from; the HTTP client stamps it

    @classmethod
    def of(cls, wire_format: str, model: str, value: Any) -> ReasoningState:
        return cls(wire_format, model, json.dumps(value, ensure_ascii=False))

    def value(self) -> Any:
        """A fresh copy of the provider's payload, for the codec that sends it back."""
        return json.loads(self.payload)

    def __repr__(self) -> str:
        return (
            f"ReasoningState({self.wire_format}, {self.model!r}, "
            f"{len(self.payload)} characters not shown)"
        )

    __str__ = __repr__


@dataclass(frozen=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # on role="tool": the call this answers
    name: str | None = None  # on role="tool": the tool's name (Gemini needs it)
    reasoning: str | None = None  # the model's thinking text, when the provider returns it
    # On role="assistant": what the provider needs back to keep reasoning across a tool loop.
    reasoning_state: ReasoningState | None = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments


@dataclass(frozen=True)
class JsonSchemaFormat:
    name: str
    schema: dict[str, Any]
    strict: bool = True


@dataclass(frozen=True)
class Request:
    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    response_format: JsonSchemaFormat | None = None
    # Already resolved against the registry to an effort the model accepts ("none" included).
    reasoning_effort: str | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    stream: bool = False
    cache: bool = True  # mark the stable prefix where the format wants markers (Anthropic)
    carry_reasoning: bool = True  # send each assistant turn's reasoning state back (ADR 0009)
    # The step that asks, for a provider that answers without a model (the bench's oracle and
    # null contestants); never encoded: a wire format has no field for it.
    step_type: StepType | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider billed them.

    `prompt_tokens` includes cached and cache-write tokens; `completion_tokens` includes reasoning.
    """

    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def uncached_prompt_tokens(self) -> int:
        return max(0, self.prompt_tokens - self.cached_tokens - self.cache_write_tokens)


class FinishReason(StrEnum):
    STOP = "stop"
    TOOL_CALLS = "tool_calls"
    LENGTH = "length"  # cut by the token cap with an answer under way
    # Cut by the token cap while still thinking: any content is unfinished thought, not an answer.
    LENGTH_IN_THINKING = "length_in_thinking"
    # The model said it was done but sent neither content nor tool calls.
    EMPTY_STOP = "empty_stop"
    CONTENT_FILTER = "content_filter"
    OTHER = "other"


@dataclass(frozen=True)
class Completion:
    message: Message  # role="assistant", with the turn's reasoning state when there is one
    finish_reason: FinishReason
    raw_finish_reason: str | None
    usage: Usage | None  # None when the provider reported none: never guessed
    model: str  # the model the response says served it; "" when it says nothing
    request_id: str | None = None
    raw_usage: dict[str, Any] = field(default_factory=dict)  # the usage object as sent, for records

    @property
    def answer(self) -> str:
        """The content the caller may act on: empty when the content is unfinished thinking."""
        if self.finish_reason is FinishReason.LENGTH_IN_THINKING:
            return ""
        return self.message.content


@dataclass(frozen=True)
class ServerSentEvent:
    event: str | None
    data: str


# How an attempt ended; the ledger bills by it (ADR 0007, 0059). answered: a completion came
# back; refused: the provider answered with an HTTP error status before generating anything;
# failed: anything else (an error event inside a 200 stream, a body cut short, no answer in
# time, a connection that failed): once sent, tokens may have been generated and billed.
AttemptKind = Literal["answered", "refused", "failed"]


@dataclass(frozen=True)
class Attempt:
    """One HTTP attempt, as the ledger will want it: every attempt that left the machine."""

    number: int
    status: int | None
    error: str | None  # None when the attempt produced a Completion
    latency_s: float
    request_id: str | None
    completion: Completion | None = None
    sent: bool = True  # False: the connection was never made, so nothing can have been billed
    # Set by the wire client, which alone knows whether an error status came at the response's
    # head or in an event inside a stream. Left out (a provider without HTTP, a test): answered
    # with a completion, else refused for an error status, else failed.
    kind: AttemptKind | None = None

    def __post_init__(self) -> None:
        if self.kind is None:
            status = self.status or 0
            kind = "answered" if self.completion is not None else "failed"
            kind = "refused" if kind == "failed" and status >= 400 else kind
            object.__setattr__(self, "kind", kind)


@dataclass(frozen=True)
class CallHooks:
    """Per-call callbacks: the ledger reserves before each attempt and settles after it."""

    before_attempt: Callable[[int, int], None] | None = None  # (attempt, body bytes); may raise
    after_attempt: Callable[[Attempt], None] | None = None
