"""What a model step's record says, made from what happened: what its call cost and used
(`account`: dollars from the ledger's rows, retries included; tokens and the answer from the
final completion), whether its answer gave the phase anything to act on (`output_failure`), and
each tool call it made (`tool_record`), where its call went (`server_of`) and what kind of
error ended a failed one (`error_type`)."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from stepswitch.agent.tools.base import ToolResult
from stepswitch.errors import ProviderError, RunStopped
from stepswitch.ledger import CallRow
from stepswitch.records.money import CostRange
from stepswitch.records.steps import ARGUMENT_CHARS, ModelStep, ToolCallRecord, cut
from stepswitch.wire.served import same_model
from stepswitch.wire.types import Completion, FinishReason, ToolCall

# Why a step's answer gave the phase nothing to act on: a model-output failure, counted.
OutputFailure = Literal[
    "length_in_thinking",
    "cut_at_output_cap",
    "empty_stop",
    "prose_instead_of_tool_call",
    "review_not_json",
]


# The failures that are a reply cut at the output cap (an answer, or thinking), and how many a
# run takes before it stops (ADR 0062).
CUT: frozenset[OutputFailure] = frozenset({"cut_at_output_cap", "length_in_thinking"})
MAX_CUT_REPLIES = 3


def check_cut_replies(count: int, facts: ModelStep) -> None:
    """RunStopped (`limit`) once `count` replies of the run were cut; `facts` is the last."""
    if count >= MAX_CUT_REPLIES:
        raise RunStopped(
            "limit",
            f"{count} replies were cut at the output cap (the last on worker {facts.worker!r}, "
            f"{facts.completion_tokens:,} tokens out): raise that worker's max_output_tokens, "
            "or give the step a model that answers shorter",
        )


def account(facts: ModelStep, rows: list[CallRow], completion: Completion | None) -> None:
    """Fill `facts` in place; `completion` None: the call raised, only its dollars are known."""
    f = facts
    f.attempts = len(rows)
    if rows and any(r.low_usd is None for r in rows):
        f.cost = None
    else:
        f.cost = CostRange(
            low=sum(r.low_usd or 0.0 for r in rows), high=sum(r.high_usd or 0.0 for r in rows)
        )
    if completion is None:
        return
    f.finish_reason = completion.finish_reason.value
    f.request_id = completion.request_id
    f.served_model = completion.model or None
    f.served_other_model = bool(completion.model) and not same_model(f.model, completion.model)
    f.text = cut(completion.answer)
    usage = completion.usage
    if usage is None:
        f.usage_reported = False
        _add_note(f, "no usage reported: the cost is a range up to the reservation")
        return
    f.prompt_tokens = usage.prompt_tokens
    f.cached_tokens = usage.cached_tokens
    f.cache_write_tokens = usage.cache_write_tokens
    f.completion_tokens = usage.completion_tokens
    f.reasoning_tokens = usage.reasoning_tokens
    for row in rows:
        if row.over_reservation:
            _add_note(f, f"billed ${row.over_usd or 0.0:.4f} above its reservation")
        if row.misreport is not None:
            _add_note(f, row.misreport)


def _add_note(facts: ModelStep, text: str) -> None:
    facts.note = f"{facts.note}; {text}" if facts.note else text


def output_failure(completion: Completion) -> OutputFailure | None:
    """Thinking cut off by the token cap, or an answer cut there (either's tool calls, if any,
    are not run: their arguments may be cut too), or no tool call: empty content with a
    normal stop, or prose."""
    if completion.finish_reason is FinishReason.LENGTH_IN_THINKING:
        return "length_in_thinking"
    if completion.finish_reason is FinishReason.LENGTH:
        return "cut_at_output_cap"
    if completion.message.tool_calls:
        return None
    if completion.finish_reason is FinishReason.EMPTY_STOP:
        return "empty_stop"
    return "prose_instead_of_tool_call"


def tool_record(call: ToolCall, result: ToolResult) -> ToolCallRecord:
    return ToolCallRecord(
        name=call.name,
        call_id=call.id,
        arguments=call.arguments[:ARGUMENT_CHARS],
        ok=result.ok,
        refused=result.refused,
        exit_code=result.exit_code,
        output=cut(result.output),
    )


@runtime_checkable
class _AtUrl(Protocol):
    """A provider that says its base URL (the wire's HTTP providers)."""

    base_url: str


DEFAULT_PORTS = {"http": 80, "https": 443}


def server_of(provider: object) -> tuple[str | None, int | None]:
    """The host a provider's calls go to, and its port when the URL names one other than its
    scheme's default: never the URL's path, query or user part. (None, None): not known."""
    if not isinstance(provider, _AtUrl):
        return None, None
    try:
        url = urlsplit(provider.base_url)
        host, port = url.hostname, url.port
    except ValueError:  # not a URL a call could have gone to
        return None, None
    if not host:
        return None, None
    return host, None if port == DEFAULT_PORTS.get(url.scheme) else port


def error_type(exc: BaseException) -> str:
    """What kind of error ended a call: the HTTP status the provider answered with, else the
    exception's class name (never its message)."""
    if isinstance(exc, ProviderError) and exc.status is not None:
        return str(exc.status)
    return type(exc).__name__
