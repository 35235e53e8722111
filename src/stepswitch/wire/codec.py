"""What every wire format implements: encode a Request, decode a response or a stream."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from stepswitch.wire.types import Completion, Request, ServerSentEvent


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


def join_url(base_url: str, path: str) -> str:
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def request_id_from_headers(headers: Mapping[str, str]) -> str | None:
    for name in ("x-request-id", "request-id", "x-goog-request-id", "cf-ray"):
        value = headers.get(name)
        if value:
            return value
    return None
