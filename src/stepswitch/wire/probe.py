"""`ssw probe`: ask one provider and model what they really do, and write the answers down.

Every check is one or two real calls (at most ~15 in all, retries aside). A check that fails
records the error instead of stopping the probe; only a refused key or a server that cannot be
reached at all stops it, since nothing else can work. A transient error (429, 5xx, a timeout) is
retried, and one that lasts leaves the check unknown: it says nothing about what the model can do.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import UTC, datetime
from functools import partial
from typing import Any

from stepswitch.errors import AuthError, DeadlineExceeded, ProviderError, RetriesExhausted
from stepswitch.registry.presets import Capability, ModelSpec, ProviderSpec, get_model
from stepswitch.wire.client import RETRYABLE_STATUS, HttpProvider, RetryPolicy
from stepswitch.wire.formats.messages_cache import min_cacheable_tokens
from stepswitch.wire.open import open_provider
from stepswitch.wire.probe_report import (
    TRANSIENT,
    ProbeReport,
    ProbeResult,
)
from stepswitch.wire.types import Attempt, Completion, JsonSchemaFormat, Message, Request, ToolSpec

_FILLER = "the quick brown fox jumps over the lazy dog while a small cat sleeps near the warm fire"
CACHE_PREFIX_WORDS = 1400  # above the 1024-token minimum OpenAI caches
CACHE_MARGIN = 1.25  # the prefix, in words (about a token each), over the model's minimum
NEAR_SHARES = (0.8, 0.5)  # of the context window; the second only if the first is refused
OVER_SHARE = 1.25
_REJECTED = frozenset({400, 413, 422})  # how servers say "prompt too long"
# A one-off 429 or 503 must not read as "cannot do tools": each call gets three tries.
PROBE_RETRY = RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=10.0)


def _tool(name: str, description: str, arg: str) -> ToolSpec:
    schema = {"type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}
    return ToolSpec(name, description, schema)


_WEATHER = _tool("get_weather", "Current weather for a city.", "city")
_TIME = _tool("get_time", "Current local time in a time zone.", "zone")
_ANSWER_KEYS = {"answer": {"type": "string", "enum": ["yes", "no"]}, "sure": {"type": "boolean"}}
_ANSWER = JsonSchemaFormat(
    "answer",
    {
        "type": "object",
        "properties": _ANSWER_KEYS,
        "required": list(_ANSWER_KEYS),
        "additionalProperties": False,
    },
)


def _filler(words: int) -> str:
    base = _FILLER.split()
    return " ".join(base[i % len(base)] for i in range(words))


def _user(text: str) -> tuple[Message, ...]:
    return (Message("user", text),)


def _numbers(c: Completion) -> dict[str, int | float]:
    return {} if c.usage is None else dict(asdict(c.usage))


def _key_paths(raw: Mapping[str, Any], prefix: str = "") -> set[str]:
    """Dotted paths of every key, nested ones too: "prompt_tokens_details.cached_tokens"."""
    nested = [_key_paths(v, f"{prefix}{k}.") for k, v in raw.items() if isinstance(v, dict)]
    return {f"{prefix}{k}" for k in raw}.union(*nested)


def is_transient(exc: ProviderError) -> bool:
    """Retries ran out, time ran out, or a status that means "later": not the model's answer."""
    if isinstance(exc, AuthError):
        return False
    return isinstance(exc, RetriesExhausted | DeadlineExceeded) or exc.status in RETRYABLE_STATUS


def _failure(name: str, exc: ProviderError, prefix: str = "") -> ProbeResult:
    detail = f"{prefix}{type(exc).__name__}: {exc}"
    if is_transient(exc):
        detail = f"{TRANSIENT} ({detail})"
    ok = None if is_transient(exc) else False
    return ProbeResult(name=name, ok=ok, status=exc.status, detail=detail[:400])


class _Prober:
    def __init__(self, provider: HttpProvider, model_id: str, timeout_s: float, cap: int) -> None:
        self.provider, self.model_id, self.timeout_s, self.cap = provider, model_id, timeout_s, cap
        self.latency = 0.0
        self.raw_usages: list[dict[str, Any]] = []
        self.reached = False  # some attempt made a connection: the server is there
        self.last_error = ""

    def on_attempt(self, attempt: Attempt) -> None:
        self.reached = self.reached or attempt.sent
        self.last_error = attempt.error or ""

    def ask(self, messages: tuple[Message, ...], **fields: Any) -> Completion:
        fields.setdefault("max_output_tokens", self.cap)
        request = Request(model=self.model_id, messages=messages, **fields)
        start = time.monotonic()
        # No run deadline here: the per-call timeout is the one limit, and errors name it.
        c = self.provider.complete(request, deadline=float("inf"), timeout=self.timeout_s)
        self.latency = round(time.monotonic() - start, 3)
        if c.raw_usage:
            self.raw_usages.append(c.raw_usage)
        return c

    def result(
        self, name: str, ok: bool | None, detail: str, c: Completion, **extra: int | float
    ) -> ProbeResult:
        """A result for the last call, with its token counts."""
        measured = {**_numbers(c), **extra}
        return ProbeResult(
            name=name, ok=ok, detail=detail[:400], latency_s=self.latency, measured=measured
        )


def _guard(name: str, check: Callable[[], ProbeResult]) -> ProbeResult:
    try:
        return check()
    except AuthError:
        raise
    except ProviderError as exc:
        return _failure(name, exc)


def _tool_call(p: _Prober) -> ProbeResult:
    c = p.ask(
        _user("What is the weather in Paris? Use the tool."),
        tools=(_WEATHER,),
        tool_choice="required",
    )
    calls = c.message.tool_calls
    ok, why = False, f"no tool call (finish={c.finish_reason.value}): {c.message.content[:80]!r}"
    if calls:
        try:
            args = [call.parsed_arguments() for call in calls]
            ok, why = calls[0].name == _WEATHER.name, f"{[call.name for call in calls]} {args}"
        except ValueError:
            why = f"arguments are not JSON: {calls[0].arguments[:200]!r}"
    return p.result("tool_call", ok, why, c, tool_calls=len(calls))


def _parallel_tool_calls(p: _Prober) -> ProbeResult:
    prompt = "In this one turn, call get_weather for Paris and get_time for Asia/Tokyo."
    c = p.ask(
        _user(prompt), tools=(_WEATHER, _TIME), tool_choice="required", parallel_tool_calls=True
    )
    names = [call.name for call in c.message.tool_calls]
    why = f"{len(names)} call(s) in one turn: {names} (finish={c.finish_reason.value})"
    return p.result("parallel_tool_calls", len(names) >= 2, why, c, tool_calls=len(names))


def _json_schema(p: _Prober) -> ProbeResult:
    prompt = "Is Paris the capital of France? Reply as JSON with `answer` and `sure`."
    c = p.ask(_user(prompt), response_format=_ANSWER)
    required = _ANSWER.schema["required"]
    try:
        parsed = json.loads(c.message.content)
    except ValueError:
        return p.result("json_schema", False, f"not JSON: {c.message.content[:200]!r}", c)
    ok = isinstance(parsed, dict) and all(key in parsed for key in required)
    why = f"parsed {parsed!r}" if ok else f"missing keys of {required}: {parsed!r}"
    return p.result("json_schema", ok, why, c)


def _streaming(p: _Prober) -> ProbeResult:
    c = p.ask(_user("Say hello in five words."), stream=True)
    arrived = bool(c.message.content.strip() or c.message.tool_calls)
    why = "content arrived" if arrived else "no content or tool call arrived"
    why += "; usage in the final chunk" if c.usage else "; no usage in the stream"
    return p.result("streaming", arrived and c.usage is not None, why, c)


def _usage_fields(p: _Prober) -> ProbeResult:
    """Read from every answer so far: no call of its own."""
    keys = sorted(set().union(*(_key_paths(raw) for raw in p.raw_usages)))
    if not keys:
        return ProbeResult(name="usage_fields", ok=False, detail="no answer reported usage")
    cached = [k for k in keys if "cache" in k] or ["none"]
    reasoning = [k for k in keys if "reasoning" in k or "thought" in k] or ["none"]
    detail = f"cached fields: {', '.join(cached)}; reasoning fields: {', '.join(reasoning)}"
    return ProbeResult(name="usage_fields", ok=True, detail=detail, usage_keys=keys)


def _reasoning(p: _Prober, effort: str) -> ProbeResult:
    prompt = "How many letters r are in the word strawberry? Answer with a number."
    name = f"reasoning:{effort}"
    try:
        c = p.ask(_user(prompt), reasoning_effort=effort)
    except ProviderError as exc:
        if exc.status != 400 or isinstance(exc, AuthError):
            raise
        return _failure(name, exc, prefix=f"effort {effort!r} rejected: ")
    text = bool(c.message.reasoning)
    tokens = c.usage.reasoning_tokens if c.usage else 0
    why = f"accepted; {tokens} reasoning tokens; reasoning text {'returned' if text else 'absent'}"
    return p.result(name, True, why, c, reasoning_text=int(text))


def cache_prefix_words(wire_format: str, model_id: str) -> int:
    """Words of filler the cache check repeats: above what the model caches at the least.
    Anthropic's minimum differs per model (up to 4096 tokens) and needs explicit breakpoints,
    which the messages codec sets; the others cache from 1024 tokens by themselves."""
    if wire_format != "messages":
        return CACHE_PREFIX_WORDS
    return max(CACHE_PREFIX_WORDS, int(min_cacheable_tokens(model_id) * CACHE_MARGIN))


def _prompt_cache(p: _Prober, window: int | None) -> ProbeResult:
    words = cache_prefix_words(p.provider.codec.wire_format, p.model_id)
    words = words if window is None else min(words, window // 2)
    messages = (
        Message("system", f"Reference text, repeated on purpose:\n{_filler(words)}"),
        Message("user", "Reply with the single word OK."),
    )
    first = p.ask(messages)
    c = p.ask(messages)
    if c.usage is None:
        return ProbeResult(name="prompt_cache", ok=None, detail="no usage reported: cannot tell")
    cached, prompt = c.usage.cached_tokens, c.usage.prompt_tokens
    share = cached / prompt if prompt else 0.0
    why = f"second call: {cached} of {prompt} prompt tokens cached ({share:.0%})"
    first_cached = first.usage.cached_tokens if first.usage else 0
    first_written = first.usage.cache_write_tokens if first.usage else 0
    if first_written:
        why += f"; the first call wrote {first_written} to the cache"
    # A hit on a template's first few tokens is not a prefix cache: ask for most of the prompt.
    ok = share >= 0.5
    extra = {
        "first_cached_tokens": first_cached,
        "first_cache_write_tokens": first_written,
        "cached_share": round(share, 3),
    }
    return p.result("prompt_cache", ok, why, c, **extra)


def _ask_long(p: _Prober, words: int) -> Completion | ProviderError:
    """A prompt of `words` filler words: its completion, or the provider's refusal of it (a key
    the provider refuses still raises)."""
    try:
        return p.ask(_user(f"{_filler(words)}\nReply with OK."), max_output_tokens=16)
    except AuthError:
        raise
    except ProviderError as exc:
        return exc


def _context_near(p: _Prober, window: int) -> ProbeResult:
    """A prompt at 80% of the window; once more at 50% if that is refused as too long."""
    refused = ""
    for share in NEAR_SHARES:
        words = int(window * share)
        c = _ask_long(p, words)
        if isinstance(c, ProviderError):
            if c.status not in _REJECTED or share == NEAR_SHARES[-1]:
                return _failure("context_near_limit", c, prefix=refused)
            refused = f"{share:.0%} of the window refused (HTTP {c.status}); "
            continue
        sent = c.usage.prompt_tokens if c.usage else words
        why = f"{refused}{sent} prompt tokens accepted of {window}"
        return p.result("context_near_limit", not refused, why, c, window=window, share=share)
    raise AssertionError("unreachable: the last share always returns or raises")


def _context_over(p: _Prober, window: int) -> ProbeResult:
    words = int(window * OVER_SHARE)
    c = _ask_long(p, words)
    if isinstance(c, ProviderError):
        result = _failure("context_over_limit", c, prefix="refused: ")
        if result.ok is not None:
            result.ok = c.status in _REJECTED  # refused as too long: the window is real
        result.measured = {"window": window, "words_sent": words}
        return result
    sent = c.usage.prompt_tokens if c.usage else words
    why = f"accepted {sent} prompt tokens over a registry window of {window}"
    return p.result("context_over_limit", False, why, c, window=window, words_sent=words)


_CLAIMS: dict[str, Capability] = {
    "tool_call": "tools",
    "parallel_tool_calls": "parallel_tool_calls",
    "json_schema": "json_schema",
    "streaming": "streaming",
    "prompt_cache": "prompt_cache",
    "reasoning": "reasoning",
}


def _skip(name: str, why: str) -> ProbeResult:
    return ProbeResult(name=name, ok=None, detail=why)


def _checks(
    p: _Prober, model: ModelSpec, check_context: bool, done: Callable[[ProbeResult], None]
) -> list[ProbeResult]:
    """Every check in report order, each handed to `done` as it ends; the last reads the usage
    the others saw."""
    no_effort = partial(_skip, "reasoning", "the registry lists no reasoning effort for this model")
    named: list[tuple[str, Callable[[], ProbeResult]]] = [
        ("tool_call", partial(_tool_call, p)),
        ("parallel_tool_calls", partial(_parallel_tool_calls, p)),
        ("json_schema", partial(_json_schema, p)),
        ("streaming", partial(_streaming, p)),
        *(
            [(f"reasoning:{e}", partial(_reasoning, p, e)) for e in model.reasoning_efforts]
            or [("reasoning", no_effort)]
        ),
        ("prompt_cache", partial(_prompt_cache, p, model.context_window)),
    ]
    for name, check in (
        ("context_near_limit", _context_near),
        ("context_over_limit", _context_over),
    ):
        window = model.context_window
        unknown = partial(_skip, name, "the registry does not know this model's context window")
        # Filling a hosted model's window can cost dollars per probe: only when asked.
        costly = partial(_skip, name, "fills the context window, paid per token: --check-context")
        if not check_context:
            named.append((name, costly))
        else:
            named.append((name, unknown if window is None else partial(check, p, window)))
    named.append(("usage_fields", partial(_usage_fields, p)))
    results = []
    for name, run_check in named:
        result = _guard(name, run_check)
        if not p.reached:  # the first check's calls never connected: no other check can
            raise ProviderError(
                f"cannot reach {p.provider.base_url} ({p.last_error}); is the server running? "
                "(fix: start it, or pass --base-url)"
            )
        done(result)
        results.append(result)
    return results


def run_probe(
    spec: ProviderSpec,
    model_id: str,
    *,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 60,
    max_output_tokens: int = 1024,
    check_context: bool | None = None,
    retry: RetryPolicy = PROBE_RETRY,
    on_result: Callable[[ProbeResult], None] | None = None,
) -> ProbeReport:
    """Run every check against one model, each result handed to `on_result` as its check ends
    (`timeout_s`: each HTTP call's limit); AuthError (a refused key) aborts, and a ProviderError
    when the server cannot be reached at all; nothing else does."""
    model = get_model(spec, model_id)
    calls = 0
    prober: _Prober | None = None

    def done(result: ProbeResult) -> None:
        if model_id in spec.models:  # an unlisted local model claims nothing either way
            claim = _CLAIMS.get(result.name.split(":")[0])
            result.registry_claims = None if claim is None else claim in model.capabilities
        if on_result is not None:
            on_result(result)

    def count(attempt: Attempt) -> None:
        nonlocal calls
        calls += 1
        if prober is not None:
            prober.on_attempt(attempt)

    provider = open_provider(
        spec, model_id, base_url=base_url, env=env, retry=retry, on_attempt=count
    )
    probed_at = datetime.now(UTC).isoformat(timespec="seconds")
    try:
        prober = _Prober(provider, model_id, timeout_s, max_output_tokens)
        costly = spec.local if check_context is None else check_context
        results = _checks(prober, model, costly, done)
    finally:
        provider.close()
    return ProbeReport(
        provider=spec.name,
        model=model_id,
        base_url=base_url or spec.base_url,
        wire_format=provider.codec.wire_format,
        probed_at=probed_at,
        calls=calls,
        results=results,
    )
