"""Whether the model a provider says it served is the model we asked for.

Providers name a model in their own way: a dated snapshot of an alias
("claude-sonnet-4-5" served as "claude-sonnet-4-5-20250929", "gpt-4.1" as
"gpt-4.1-2025-04-14"), an organisation prefix ("openai/gpt-4.1" on OpenRouter,
"models/gemini-2.5-flash" on Gemini), a Vertex "@date" or an OpenRouter ":variant". Those are
the same model. A different name after all that ("gpt-4.1-mini" for "gpt-4.1", a gateway's
default model) is another model, and the ledger and the records flag it.

The rule, on both ids: lowercase; keep what follows the last "/"; cut at ":" or "@"; read "."
as "-". Then they are the same when equal, or when one is the other plus a date or snapshot
tail: "-YYYYMMDD", "-YYYY-MM-DD", "-MMDD" or "-YYMM", a three-digit revision ("-001"), or
"-latest". A bare minor version is not a tail: "claude-sonnet-4" and "claude-sonnet-4-5" differ.
"""

from __future__ import annotations

import re

_SNAPSHOT_TAIL = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4}|\d{3}|latest)")


def _base(model_id: str) -> str:
    name = model_id.strip().lower().rsplit("/", 1)[-1]
    name = re.split(r"[:@]", name, maxsplit=1)[0]
    return name.replace(".", "-")


def _is_snapshot_of(longer: str, shorter: str) -> bool:
    tail = longer[len(shorter) :]
    return longer.startswith(shorter) and _SNAPSHOT_TAIL.fullmatch(tail) is not None


def same_model(requested: str, served: str) -> bool:
    """True when `served` names the model `requested` asked for (see the module's rule). An
    empty `served` (the provider said nothing) is not a mismatch: there is nothing to flag."""
    if not served.strip():
        return True
    asked, got = _base(requested), _base(served)
    if asked == got:
        return True
    asked = asked.removesuffix("-latest")
    return asked == got or _is_snapshot_of(got, asked) or _is_snapshot_of(asked, got)
