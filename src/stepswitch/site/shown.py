"""Text from a record as the page and the dashboard show it: markup escaped, and control
characters (C0, C1, bidi overrides and isolates) shown as their escapes, as ssw's printed output
shows them, so a record can neither inject markup nor reorder or hide text in the browser."""

from __future__ import annotations

import html
import json
import re
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


# How a compact JSON text (ensure_ascii=False) shows a C0 control in one of its strings: as
# `\uXXXX`, `\b`, `\f` or `\r` (tab and newline, which `shown` keeps, as `\t` and `\n`); the
# controls from DEL up it leaves raw. A match may be a false alarm (an escaped backslash before
# a `b`); none means no string holds a C0 control.
_C0_IN_JSON = re.compile(r"\\[bfru]")


def shown_json(data: Any) -> str:
    """`json.dumps(shown(data))`, compact and not ASCII-escaped: a value with no control in any
    string is dumped as it is, with no walk over it (most records hold none)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if _C0_IN_JSON.search(text) is None and escape_controls(text) == text:
        return text
    return json.dumps(shown(data), ensure_ascii=False, separators=(",", ":"))
