"""What every wire format implements: encode a Request, decode a response or a stream."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from stepswitch.wire.types import Completion, Message, Request, ServerSentEvent


class Codec(Protocol):
    wire_format: str  # the registry's name for it, e.g. "chat-completions"

    def url(self, base_url: str, request: Request) -> str:
        """The endpoint for this request (Gemini puts the model and stream mode in the path)."""
        ...

    def headers(self, api_key: str | None) -> dict[str, str]:
        """Auth and version headers. Called with None for keyless local servers."""
        ...

    def encode(self, request: Request) -> dict[str, Any]:
        """The JSON body."""
        ...

    def decode(self, body: Any, request_id: str | None) -> Completion:
        """A non-streamed response body (parsed JSON). Raises MalformedResponse, never KeyError."""
        ...

    def decode_stream(
        self, events: Iterable[ServerSentEvent], request_id: str | None
    ) -> Completion:
        """Accumulate a stream of server-sent events into one Completion."""
        ...


def given(**fields: Any) -> dict[str, Any]:
    """The fields that are set: a request's optional settings go into a body only when given."""
    return {key: value for key, value in fields.items() if value is not None}


def join_url(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def request_id_from_headers(headers: Mapping[str, str]) -> str | None:
    for name in ("x-request-id", "request-id", "x-goog-request-id", "cf-ray"):
        value = headers.get(name)
        if value:
            return value
    return None


def carried_state(request: Request, message: Message, wire_format: str) -> Any | None:
    """The payload of `message`'s reasoning state to send back, or None.

    State goes back only to the format and the model that produced it: after an escalation to
    another model it is dropped, never replayed (ADR 0009).
    """
    state = message.reasoning_state
    if state is None or not request.carry_reasoning:
        return None
    if state.wire_format != wire_format or state.model != request.model:
        return None
    return state.value()


def interleave(
    rebuilt: list[dict[str, Any]], carried: list[dict[str, Any]], is_call: Callable[[Any], bool]
) -> list[dict[str, Any]]:
    """Put each carried `part` back where it came: its `at` counts the tool calls before it, so
    `at` 0 goes first, and `at` n just before the n-th call (0-based); the rest go last."""
    pending = list(carried)
    out: list[dict[str, Any]] = []

    def flush(upto: float) -> None:
        while pending and pending[0]["at"] <= upto:
            out.append(pending.pop(0)["part"])

    flush(0)
    calls = 0
    for part in rebuilt:
        if is_call(part):
            flush(calls)
            calls += 1
        out.append(part)
    flush(float("inf"))
    return out
