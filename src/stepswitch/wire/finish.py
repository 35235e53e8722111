"""Finish reasons normalized across formats, with unfinished thinking and empty stops explicit."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stepswitch.wire.types import FinishReason

_THINK_OPEN = re.compile(r"^\s*<(think|thinking)>", re.IGNORECASE)


@dataclass(frozen=True)
class SplitContent:
    content: str
    reasoning: str | None
    thinking_unfinished: bool


def split_thinking(content: str, reasoning: str | None) -> SplitContent:
    """Move `<think>...</think>` text out of the content; an unclosed tag is unfinished thought."""
    match = _THINK_OPEN.match(content)
    if not match:
        return SplitContent(content, reasoning, thinking_unfinished=False)
    tag = match.group(1)
    rest = content[match.end() :]
    close = re.search(rf"</{tag}>", rest, re.IGNORECASE)
    prior = f"{reasoning}\n" if reasoning else ""
    if close is None:
        return SplitContent("", prior + rest.strip(), thinking_unfinished=True)
    thought = rest[: close.start()].strip()
    return SplitContent(rest[close.end() :].lstrip(), prior + thought, thinking_unfinished=False)


def classify_finish(
    mapped: FinishReason,
    *,
    content: str,
    has_tool_calls: bool,
    reasoning: str | None,
    thinking_unfinished: bool,
) -> FinishReason:
    """Refine a format's mapped reason with what the message actually holds."""
    if has_tool_calls and mapped in (FinishReason.STOP, FinishReason.TOOL_CALLS):
        return FinishReason.TOOL_CALLS
    still_thinking = thinking_unfinished or bool(reasoning and not content.strip())
    if mapped is FinishReason.LENGTH and not has_tool_calls and still_thinking:
        return FinishReason.LENGTH_IN_THINKING
    if mapped is FinishReason.STOP and not has_tool_calls and not content.strip():
        return FinishReason.EMPTY_STOP
    return mapped
