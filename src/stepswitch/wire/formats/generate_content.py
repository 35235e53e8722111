"""Gemini API `models/{model}:generateContent` and `:streamGenerateContent?alt=sse`.

References: https://ai.google.dev/api/generate-content (request, response, stream),
https://ai.google.dev/api/caching#Content (Content and Part), and under
https://ai.google.dev/gemini-api/docs/: function-calling, thinking, structured-output,
thought-signatures.

Decisions (reviewers: check these):
- Tool parameters go out as `parametersJsonSchema` and JSON output as `responseJsonSchema`: both
  take JSON Schema as ToolSpec and JsonSchemaFormat hold it (`parameters`/`responseSchema` take
  only an OpenAPI subset).
- Effort: Gemini 3 and later get `thinkingLevel` (xhigh -> high), as the thinking guide advises;
  older models get `thinkingBudget` from THINKING_BUDGETS. "none" is `thinkingBudget: 0`.
  `includeThoughts` is on whenever thinking is, so thought summaries come back as reasoning.
- Thought signatures (ADR 0009): the reasoning state of a model turn is the `thoughtSignature`
  of each functionCall part, by the call's position, and the last one on a text part; each goes
  back, as received, on the same part. Gemini 3 rejects a turn whose function calls lack their
  signature, so where no real one can go back (carry_reasoning off, or history from another
  model after an escalation) the first functionCall part of each model step since the last user
  prompt carries the placeholder the thought-signatures guide documents for such history.
- Tool-call ids: Gemini's own `functionCall.id` when given, else "call_{n}" by position. Ids are
  not sent back: results match calls by name and order. parallel_tool_calls has no Gemini switch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from stepswitch.errors import ProviderError
from stepswitch.wire.codec import carried_state, given, join_url
from stepswitch.wire.finish import classify_finish, split_thinking
from stepswitch.wire.shape import (
    Shape,
    as_list,
    as_object,
    as_text,
    dump_body,
    joined,
    malformed_as,
)
from stepswitch.wire.types import (
    Completion,
    FinishReason,
    Message,
    ReasoningState,
    Request,
    ServerSentEvent,
    ToolCall,
)
from stepswitch.wire.usage import usage_from_gemini

WIRE_FORMAT = "generate-content"

THINKING_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 32768}
THINKING_LEVELS = {effort: effort for effort in THINKING_BUDGETS} | {"xhigh": "high"}
SIGNATURE_PLACEHOLDER = "skip_thought_signature_validator"
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
_FINISH = {"STOP": FinishReason.STOP, "MAX_TOKENS": FinishReason.LENGTH}
_FILTERED = ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII")
_FINISH |= {reason: FinishReason.CONTENT_FILTER for reason in _FILTERED}
_FINISH |= {f"IMAGE_{r}": FinishReason.CONTENT_FILTER for r in ("SAFETY", "PROHIBITED_CONTENT")}
_GENERATION = re.compile(r"gemini-(\d+)")


def _model_id(model: str) -> str:
    return model.removeprefix("models/")


def uses_thinking_levels(model: str) -> bool:
    """Gemini 3 and later take thinkingLevel and check thought signatures on function calls."""
    match = _GENERATION.search(model)
    return match is not None and int(match.group(1)) >= 3


def _args(call: ToolCall) -> dict[str, Any]:
    try:
        value = call.parsed_arguments()
    except ValueError:
        return {}  # invalid JSON from an earlier turn: args must be an object
    return value if isinstance(value, dict) else {}


def _tool_response(content: str) -> dict[str, Any]:
    """functionResponse.response must be an object: JSON objects pass, anything else is wrapped."""
    try:
        value = json.loads(content)
    except ValueError:
        return {"result": content}
    return value if isinstance(value, dict) else {"result": value}


def _contents(request: Request) -> tuple[str | None, list[dict[str, Any]]]:
    messages: Sequence[Message] = request.messages
    turn_start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    needs_signature = uses_thinking_levels(request.model)
    names = {call.id: call.name for m in messages for call in m.tool_calls}
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        parts: list[dict[str, Any]] = []
        if message.role == "system":
            system.append(message.content)
            continue
        if message.role == "tool":
            name = message.name or names.get(message.tool_call_id or "")
            if name is None:
                raise ValueError("a tool message needs the tool's name or a matching tool call")
            response = _tool_response(message.content)
            parts.append({"functionResponse": {"name": name, "response": response}})
        elif message.role == "assistant":
            carried = carried_state(request, message, WIRE_FORMAT) or {}
            signatures = carried.get("calls", [])
            if message.content:
                parts.append({"text": message.content})
                if carried.get("text"):
                    parts[-1]["thoughtSignature"] = carried["text"]
            for n, call in enumerate(message.tool_calls):
                part: dict[str, Any] = {"functionCall": {"name": call.name, "args": _args(call)}}
                signature = signatures[n] if n < len(signatures) else None
                if signature:
                    part["thoughtSignature"] = signature
                elif needs_signature and n == 0 and i > turn_start:
                    part["thoughtSignature"] = SIGNATURE_PLACEHOLDER
                parts.append(part)
        else:
            parts.append({"text": message.content})
        role = "model" if message.role == "assistant" else "user"
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:  # e.g. several tool results in a row
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return ("\n\n".join(system) if system else None), contents


def _thinking(request: Request) -> dict[str, Any] | None:
    effort = request.reasoning_effort
    if effort is None:
        return None
    if effort == "none":
        return {"thinkingBudget": 0}
    if effort not in THINKING_BUDGETS:
        raise ValueError(f"unknown reasoning effort {effort!r}")
    if uses_thinking_levels(request.model):
        return {"thinkingLevel": THINKING_LEVELS[effort], "includeThoughts": True}
    return {"thinkingBudget": THINKING_BUDGETS[effort], "includeThoughts": True}


def encode_request(request: Request) -> dict[str, Any]:
    system, contents = _contents(request)
    body: dict[str, Any] = {"contents": contents}
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if request.tools:
        declarations = [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
            for t in request.tools
        ]
        body["tools"] = [{"functionDeclarations": declarations}]
        if request.tool_choice is not None:
            mode = _MODES[request.tool_choice]
            body["toolConfig"] = {"functionCallingConfig": {"mode": mode}}
    config = given(maxOutputTokens=request.max_output_tokens, temperature=request.temperature)
    if request.response_format is not None:
        config["responseMimeType"] = "application/json"
        config["responseJsonSchema"] = request.response_format.schema
    thinking = _thinking(request)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    return body


def _decode(body: Any, request_id: str | None) -> Completion:
    resp = as_object(body, "response")
    candidates = as_list(resp.get("candidates"), "candidates")
    raw_usage = resp.get("usageMetadata")
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    call_signatures: list[str | None] = []  # with text_signature, the turn's reasoning state
    text_signature: str | None = None
    last_thought = False
    if candidates:
        candidate = as_object(candidates[0], "candidates[0]")
        content = candidate.get("content")  # left out when a safety filter stops the answer
        parts = (
            as_list(as_object(content, "content").get("parts"), "content.parts") if content else []
        )
        for i, raw_part in enumerate(parts):
            part = as_object(raw_part, f"parts[{i}]")
            last_thought = part.get("thought") is True and "text" in part
            signature = part.get("thoughtSignature")
            signature = signature if isinstance(signature, str) and signature else None
            if "text" in part:
                (thoughts if last_thought else texts).append(
                    as_text(part["text"], f"parts[{i}].text")
                )
                if signature and not last_thought:
                    text_signature = signature
            elif "functionCall" in part:
                call_signatures.append(signature)
                call = as_object(part["functionCall"], f"parts[{i}].functionCall")
                given = call.get("id")
                args = {} if call.get("args") is None else as_object(call["args"], "args")
                calls.append(
                    ToolCall(
                        id=given if isinstance(given, str) and given else f"call_{len(calls)}",
                        name=as_text(call.get("name"), f"parts[{i}].functionCall.name"),
                        arguments=json.dumps(args, ensure_ascii=False),
                    )
                )
        raw_reason = candidate.get("finishReason")
        mapped = _FINISH.get(str(raw_reason), FinishReason.OTHER)
    else:
        # No candidate at all: the prompt itself was blocked, and promptFeedback says why.
        feedback = resp.get("promptFeedback")
        raw_reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if raw_reason is None:
            raise Shape("no candidates and no promptFeedback.blockReason")
        mapped = FinishReason.CONTENT_FILTER
    if raw_reason is not None and not isinstance(raw_reason, str):
        raise Shape("finishReason is not a string")
    split = split_thinking("".join(texts), "".join(thoughts) or None)
    reason = classify_finish(
        mapped,
        content=split.content,
        has_tool_calls=bool(calls),
        reasoning=split.reasoning,
        # A thought as the last part means the cap fell before the answer began.
        thinking_unfinished=split.thinking_unfinished or last_thought,
    )
    model, body_id = resp.get("modelVersion"), resp.get("responseId")
    served = model if isinstance(model, str) else ""
    state = None
    if text_signature or any(call_signatures):
        signatures = {"calls": call_signatures, "text": text_signature}
        state = ReasoningState.of(WIRE_FORMAT, served, signatures)
    return Completion(
        message=Message(
            "assistant",
            split.content,
            tuple(calls),
            reasoning=split.reasoning,
            reasoning_state=state,
        ),
        finish_reason=reason,
        raw_finish_reason=raw_reason,
        usage=usage_from_gemini(raw_usage),
        model=served,
        request_id=request_id or (body_id if isinstance(body_id, str) else None),
        raw_usage=raw_usage if isinstance(raw_usage, dict) else {},
    )


def _merge_chunks(chunks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One GenerateContentResponse from partial ones: parts concatenate, the last value wins."""
    body: dict[str, Any] = {}
    parts: list[Any] = []
    candidate: dict[str, Any] | None = None
    for chunk in chunks:
        if "error" in chunk:  # an error after the 200 arrives as a chunk of its own
            error = chunk["error"] if isinstance(chunk["error"], dict) else {}
            status = error.get("code") if isinstance(error.get("code"), int) else None
            text = error.get("message") or "the stream reported an error"
            raise ProviderError(
                f"generate-content: {text}", status=status, raw_body=dump_body(chunk)
            )
        for key in ("usageMetadata", "modelVersion", "responseId", "promptFeedback"):
            if chunk.get(key) is not None:
                body[key] = chunk[key]
        candidates = as_list(chunk.get("candidates"), "candidates")
        if candidates:
            piece = as_object(candidates[0], "candidates[0]")
            candidate = candidate or {}
            content = piece.get("content")
            if content:
                parts.extend(as_list(as_object(content, "content").get("parts"), "content.parts"))
            if piece.get("finishReason") is not None:
                candidate["finishReason"] = piece["finishReason"]
    if candidate is not None:
        body["candidates"] = [{"content": {"role": "model", "parts": parts}, **candidate}]
    return body


def _chunks(events: Iterable[ServerSentEvent], seen: list[str]) -> Iterable[dict[str, Any]]:
    for event in events:
        seen.append(event.data)
        yield as_object(json.loads(event.data), "stream chunk")


class GenerateContentCodec:
    wire_format = WIRE_FORMAT

    def url(self, base_url: str, request: Request) -> str:
        model = _model_id(request.model)
        if request.stream:
            return join_url(base_url, f"models/{model}:streamGenerateContent?alt=sse")
        return join_url(base_url, f"models/{model}:generateContent")

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": api_key} if api_key else {}

    def encode(self, request: Request) -> dict[str, Any]:
        return encode_request(request)

    def decode(self, body: Any, request_id: str | None) -> Completion:
        with malformed_as("generate-content", lambda: dump_body(body), request_id):
            return _decode(body, request_id)

    def decode_stream(
        self, events: Iterable[ServerSentEvent], request_id: str | None
    ) -> Completion:
        seen: list[str] = []
        with malformed_as("generate-content stream", joined(seen), request_id):
            body = _merge_chunks(_chunks(events, seen))
            if not seen:
                raise Shape("the stream ended before any chunk")
            return _decode(body, request_id)
