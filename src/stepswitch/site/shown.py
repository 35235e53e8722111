"""Text from a record as the page and the dashboard show it: markup escaped, and control
characters (C0, C1, bidi overrides and isolates) shown as their escapes, as ssw's printed output
shows them, so a record can neither inject markup nor reorder or hide text in the browser."""

from __future__ import annotations

import html
from typing import Any

from stepswitch.util.text import escape_controls


def escape(text: str) -> str:
    """`text` for HTML: controls as escapes (`\\u202e`), then `<`, `&` and quotes as entities."""
    return html.escape(escape_controls(text))


def shown(data: Any) -> Any:
    """`data` (JSON values) with every string's controls as escapes, for the script's blocks."""
    if isinstance(data, str):
        return escape_controls(data)
    if isinstance(data, dict):
        return {shown(key): shown(value) for key, value in data.items()}
    if isinstance(data, list):
        return [shown(value) for value in data]
    return data
