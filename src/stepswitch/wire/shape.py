"""Checks every decoder shares: a body that is not the documented shape becomes a
MalformedResponse with the raw body kept, never a KeyError."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from stepswitch.errors import MalformedResponse, ProviderError

RAW_BODY_KEEP = 20_000  # raw bodies kept for the record are capped like the client caps them
# The providers' opaque reasoning blobs (signatures, encrypted reasoning, redacted thinking).
_OPAQUE = re.compile(
    r'("(?:signature|encrypted_content|thoughtSignature|thought_signature|data)"\s*:\s*)'
    r'"(?:[^"\\]|\\.)*(?:"|$)'  # to the end of the text when the body was cut mid-value
)


class Shape(Exception):
    """Part of the body is not the documented shape; decode turns it into MalformedResponse."""


def scrub_opaque(text: str) -> str:
    """A raw body as kept for the record: reasoning state never rides along (ADR 0009)."""
    return _OPAQUE.sub(r'\1"[opaque]"', text)


def dump_body(body: Any) -> str:
    try:
        text = json.dumps(body, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(body)
    return scrub_opaque(text)[:RAW_BODY_KEEP]


def as_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Shape(f"{where} is not an object")
    return value


def as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Shape(f"{where} is not a list")
    return value


def as_text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise Shape(f"{where} is not a string")
    return value


def joined(seen: list[str]) -> Callable[[], str]:
    """The stream events seen so far, as the raw body to keep."""
    return lambda: scrub_opaque("\n".join(seen))[:RAW_BODY_KEEP]


@contextmanager
def malformed_as(label: str, raw_body: Callable[[], str], request_id: str | None) -> Iterator[None]:
    """Inside, a shape problem becomes one MalformedResponse naming `label`, with the raw body;
    a ProviderError (an error event in a stream) keeps the request id."""
    try:
        yield
    except (Shape, json.JSONDecodeError, MalformedResponse) as exc:
        raise MalformedResponse(
            f"{label}: {exc}", raw_body=raw_body(), request_id=request_id
        ) from None
    except ProviderError as exc:
        exc.request_id = exc.request_id or request_id
        raise
