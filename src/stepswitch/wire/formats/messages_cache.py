"""Where an Anthropic Messages request marks its stable prefix for the prompt cache.

Reference: https://platform.claude.com/docs/en/build-with-claude/prompt-caching. The API caches
only up to a block marked `cache_control: {"type": "ephemeral"}`, reads the prefix in the order
tools, system, messages, and takes at most 4 such breakpoints. We mark the last tool, the
system prompt, the last block of the user turn before the newest assistant turn, and the last
block of the request. The last one writes what the next call of a tool loop reads (it only
appends); the one before keeps a hit when a turn adds more blocks than a breakpoint looks back
over (20). A breakpoint whose prefix is under the model's minimum cacheable length caches
nothing (no error, no cost), so it is left out; the prefix is estimated at CHARS_PER_TOKEN,
which over-counts on purpose: a marker too many costs nothing, one too few costs the cache.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Minimum cacheable prefix in tokens where it is not 1024 (prompt-caching, "Cache limitations",
# read 2026-11; the Opus 4.7 and Opus 5 rows come from the same table as quoted by third
# parties, not yet checked against the page itself). A model not listed gets 1024.
CACHE_MINIMUMS = {
    ("opus", 4, 5): 4096,
    ("opus", 4, 6): 4096,
    ("haiku", 4, 5): 4096,
    ("opus", 4, 7): 2048,
    ("haiku", 3, 5): 2048,
    ("haiku", 3, 0): 2048,
    ("opus", 5, 0): 512,
}
DEFAULT_CACHE_MINIMUM = 1024
CHARS_PER_TOKEN = 3
_NEW_ID = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?=[-@:]|$)")
_OLD_ID = re.compile(r"claude-(\d+)(?:-(\d))?-(opus|sonnet|haiku)")
_UNMARKABLE = ("thinking", "redacted_thinking")  # the API takes no marker on thinking blocks


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix, in tokens, the model caches (CACHE_MINIMUMS)."""
    name = model.lower().rsplit("/", 1)[-1]
    new, old = _NEW_ID.search(name), _OLD_ID.search(name)
    if new is not None:
        key = (new.group(1), int(new.group(2)), int(new.group(3) or 0))
    elif old is not None:
        key = (old.group(3), int(old.group(1)), int(old.group(2) or 0))
    else:
        return DEFAULT_CACHE_MINIMUM
    return CACHE_MINIMUMS.get(key, DEFAULT_CACHE_MINIMUM)


def _marker() -> dict[str, str]:
    return {"type": "ephemeral"}


def mark_cache(body: dict[str, Any], model: str) -> None:
    """Add the breakpoints to an encoded request body, in the order the API reads the prefix."""
    floor = min_cacheable_tokens(model) * CHARS_PER_TOKEN
    size = 0
    tools = body.get("tools")
    if tools:
        size += len(json.dumps(tools))
        if size >= floor:
            tools[-1]["cache_control"] = _marker()
    system = body.get("system")
    if system:
        size += len(system)
        if size >= floor:  # a marker needs the system prompt as a list of text blocks
            body["system"] = [{"type": "text", "text": system, "cache_control": _marker()}]
    turns = body["messages"]
    ends: list[int] = []  # the prefix size at the end of each turn
    for turn in turns:
        size += sum(len(json.dumps(block)) for block in turn["content"])
        ends.append(size)
    last = len(turns) - 1
    earlier = [i for i in range(last) if turns[i]["role"] == "user"]
    for i in [*earlier[-1:], last] if turns else []:
        markable = [b for b in turns[i]["content"] if b["type"] not in _UNMARKABLE]
        if markable and ends[i] >= floor:
            markable[-1]["cache_control"] = _marker()
