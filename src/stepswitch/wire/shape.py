"""Checks every decoder shares: a body that is not the documented shape becomes a
MalformedResponse with the raw body kept, never a KeyError."""

from __future__ import annotations

import json
from typing import Any

RAW_BODY_KEEP = 20_000  # raw bodies kept for the record are capped like the client caps them


class Shape(Exception):
    """Part of the body is not the documented shape; decode turns it into MalformedResponse."""


def dump_body(body: Any) -> str:
    try:
        return json.dumps(body, ensure_ascii=False)[:RAW_BODY_KEEP]
    except (TypeError, ValueError):
        return repr(body)[:RAW_BODY_KEEP]


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
