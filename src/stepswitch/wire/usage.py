"""Usage normalized from every shape providers send. One function per family of shapes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from stepswitch.errors import MalformedResponse
from stepswitch.wire.types import Usage


def _count(obj: Any, key: str) -> int:
    """A token count, 0 when absent or null; a non-integer is a malformed response."""
    if not isinstance(obj, dict):
        return 0
    value = obj.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedResponse(f"usage field {key!r} is not a token count: {value!r}")
    return value


def _reading_usage(read: Callable[[dict[str, Any]], Usage]) -> Callable[[Any], Usage | None]:
    """`read` given the usage object as it came: None when the response had none, and a
    MalformedResponse when it is not an object."""

    @functools.wraps(read)
    def reader(raw: Any) -> Usage | None:
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise MalformedResponse(f"usage is not an object: {type(raw).__name__}")
        return read(raw)

    return reader


@_reading_usage
def usage_from_chat(usage: dict[str, Any]) -> Usage:
    """OpenAI chat-completions and the OpenAI-compatible servers (vLLM, llama.cpp, DeepSeek...)."""
    prompt_details = usage.get("prompt_tokens_details")  # may be null or missing
    completion_details = usage.get("completion_tokens_details")
    cache_hit = _count(usage, "prompt_cache_hit_tokens")
    cache_miss = _count(usage, "prompt_cache_miss_tokens")
    prompt = _count(usage, "prompt_tokens") or cache_hit + cache_miss
    cached = _count(prompt_details, "cached_tokens") or cache_hit
    return Usage(
        prompt_tokens=prompt,
        cached_tokens=cached,
        cache_write_tokens=_count(prompt_details, "cache_write_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        reasoning_tokens=_count(completion_details, "reasoning_tokens"),
    )


@_reading_usage
def usage_from_responses(usage: dict[str, Any]) -> Usage:
    """OpenAI Responses API: input_tokens / output_tokens with their *_details."""
    return Usage(
        prompt_tokens=_count(usage, "input_tokens"),
        cached_tokens=_count(usage.get("input_tokens_details"), "cached_tokens"),
        completion_tokens=_count(usage, "output_tokens"),
        reasoning_tokens=_count(usage.get("output_tokens_details"), "reasoning_tokens"),
    )


@_reading_usage
def usage_from_anthropic(usage: dict[str, Any]) -> Usage:
    """Anthropic Messages: input_tokens excludes cache reads and cache writes, so add them."""
    read = _count(usage, "cache_read_input_tokens")
    write = _count(usage, "cache_creation_input_tokens")
    return Usage(
        prompt_tokens=_count(usage, "input_tokens") + read + write,
        cached_tokens=read,
        cache_write_tokens=write,
        completion_tokens=_count(usage, "output_tokens"),
        reasoning_tokens=_count(usage.get("output_tokens_details"), "thinking_tokens"),
    )


@_reading_usage
def usage_from_gemini(usage: dict[str, Any]) -> Usage:
    """Gemini usageMetadata: candidatesTokenCount excludes thoughts, which bill as output."""
    thoughts = _count(usage, "thoughtsTokenCount")
    return Usage(
        prompt_tokens=_count(usage, "promptTokenCount") + _count(usage, "toolUsePromptTokenCount"),
        cached_tokens=_count(usage, "cachedContentTokenCount"),
        completion_tokens=_count(usage, "candidatesTokenCount") + thoughts,
        reasoning_tokens=thoughts,
    )
