"""Anthropic Messages API (`POST /v1/messages`, anthropic-version 2023-06-01).

References, under https://platform.claude.com/docs/en/: api/messages, api/errors,
build-with-claude/streaming, agents-and-tools/tool-use/implement-tool-use,
build-with-claude/{extended-thinking,adaptive-thinking,structured-outputs}.

Effort (reviewers: check this). Claude 4.6 and later, and ids without a version, get
`thinking: {type: adaptive}` plus `output_config.effort` (minimal -> low): Opus 4.7 and later
reject `budget_tokens`. Older models get `thinking: {type: enabled, budget_tokens}` from
THINKING_BUDGETS, and under a caller's cap the budget shrinks to leave 1024 for the answer (no
thinking if that leaves under the 1024 minimum). With thinking on and no caller's cap, max_tokens
is the effort's THINKING_BUDGETS entry plus 4096 for the answer, in both modes. "none" sends no
thinking and no effort. Thinking stays off with tool_choice "required" (unsupported with
thinking). Inside a tool loop it stays on only when the assistant turn that called the tools
carries its signed thinking back (ADR 0009: same model, carry_reasoning on), since a tool loop
is one assistant turn and the API wants that turn's thinking blocks back unchanged; otherwise it
stays off for the whole loop. temperature is dropped while thinking is on. JSON schema output
uses `output_config.format`, which takes no name or strict flag.

Reasoning state (build-with-claude/thinking-tool-workflows): each signed `thinking` block and
each `redacted_thinking` block of a response, values as received, with the count of tool_use
blocks before it, so they go back in place in that assistant turn, and only while thinking is
on.

Prompt caching: with Request.cache, breakpoints as messages_cache.py places them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stepswitch.errors import ProviderError
from stepswitch.wire.codec import carried_state, given, interleave, join_url
from stepswitch.wire.finish import classify_finish, split_thinking
from stepswitch.wire.formats.messages_cache import mark_cache
from stepswitch.wire.shape import (
    Shape,
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
from stepswitch.wire.usage import usage_from_anthropic

WIRE_FORMAT = "messages"

API_VERSION = "2023-06-01"
THINKING_BUDGETS = {"minimal": 1024, "low": 4096, "medium": 8192, "high": 16384, "xhigh": 24576}
ADAPTIVE_EFFORTS = {effort: effort for effort in THINKING_BUDGETS} | {"minimal": "low"}
_MIN_BUDGET = 1024
_ANSWER_ROOM = 4096  # max_tokens when the caller sets none, and the room added above a budget

_STOP = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "tool_use": FinishReason.TOOL_CALLS,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "refusal": FinishReason.CONTENT_FILTER,
}
# The HTTP status each documented error type stands for (api/errors).
_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403}
_ERROR_STATUS |= {"not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429}
_ERROR_STATUS |= {"api_error": 500, "overloaded_error": 529}
# Each streamed delta type, and the key that carries its text in both the delta and the block.
_DELTA_KEYS = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "input_json_delta": "partial_json",
}
_VERSION_IN_ID = re.compile(r"-(\d+)(?:-(\d{1,2}))?(?=-|$)")


def thinks_adaptively(model: str) -> bool:
    """Claude 4.6 and later use adaptive thinking; a model id without a version counts as new."""
    match = _VERSION_IN_ID.search(model)
    if match is None:
        return True
    return (int(match.group(1)), int(match.group(2) or 0)) >= (4, 6)


def _in_tool_loop(messages: Sequence[Message]) -> bool:
    """True when the conversation ends in results for an assistant turn that called tools."""
    for message in reversed(messages):
        if message.role == "user":
            return False
        if message.role == "assistant" and message.tool_calls:
            return True
    return False


def _tool_input(call: ToolCall) -> dict[str, Any]:
    try:
        value = call.parsed_arguments()
    except ValueError:
        return {}  # invalid JSON from an earlier turn: the API only takes an object
    return value if isinstance(value, dict) else {}


def _loop_keeps_thinking(request: Request) -> bool:
    """The assistant turn that called the tools brings its signed thinking back."""
    last = next((m for m in reversed(request.messages) if m.role == "assistant"), None)
    return last is not None and bool(carried_state(request, last, WIRE_FORMAT))


def _blocks(message: Message, thinking: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if message.role == "tool":
        if message.tool_call_id is None:
            raise ValueError("a tool message needs the tool_call_id it answers")
        return [
            {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
        ]
    if message.role == "user":
        return [{"type": "text", "text": message.content}]
    blocks: list[dict[str, Any]] = []
    if message.content:  # the API rejects empty text blocks
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": _tool_input(call)}
        for call in message.tool_calls
    )
    if thinking:
        blocks = interleave(blocks, thinking, lambda block: block["type"] == "tool_use")
    return blocks


def _conversation(request: Request, thinking_on: bool) -> tuple[str | None, list[dict[str, Any]]]:
    """System text goes top-level; consecutive same-role turns (tool results) merge into one.
    Signed thinking goes back only while thinking is on."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system":
            system.append(message.content)
            continue
        role = "assistant" if message.role == "assistant" else "user"
        thinking = carried_state(request, message, WIRE_FORMAT) if thinking_on else None
        blocks = _blocks(message, thinking)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return ("\n\n".join(system) if system else None), turns


def _tool_choice(request: Request) -> dict[str, Any] | None:
    kinds = {"auto": "auto", "required": "any", "none": "none"}
    choice: dict[str, Any] | None = None
    if request.tool_choice is not None:
        choice = {"type": kinds[request.tool_choice]}
    if request.parallel_tool_calls is False and request.tool_choice != "none":
        choice = choice or {"type": "auto"}
        choice["disable_parallel_tool_use"] = True
    return choice


def _apply_effort(request: Request, body: dict[str, Any]) -> None:
    effort = request.reasoning_effort
    if effort is None or effort == "none":
        return
    if effort not in THINKING_BUDGETS:
        raise ValueError(f"unknown reasoning effort {effort!r}")
    in_loop = _in_tool_loop(request.messages)
    think = request.tool_choice != "required" and (not in_loop or _loop_keeps_thinking(request))
    budget = THINKING_BUDGETS[effort]
    if think and request.max_output_tokens is None:
        body["max_tokens"] = budget + _ANSWER_ROOM  # thinking counts toward max_tokens
    if thinks_adaptively(request.model):
        body.setdefault("output_config", {})["effort"] = ADAPTIVE_EFFORTS[effort]
        if think:
            body["thinking"] = {"type": "adaptive", "display": "summarized"}
        return
    if not think:
        return
    if request.max_output_tokens is not None:
        budget = min(budget, request.max_output_tokens - _MIN_BUDGET)
    if budget >= _MIN_BUDGET:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}


def encode_request(request: Request) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_output_tokens or _ANSWER_ROOM,
    }
    if request.response_format is not None:
        fmt = {"type": "json_schema", "schema": request.response_format.schema}
        body.setdefault("output_config", {})["format"] = fmt
    _apply_effort(request, body)
    system, body["messages"] = _conversation(request, thinking_on="thinking" in body)
    body |= given(system=system)
    if request.tools:
        body["tools"] = [
            {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
            for tool in request.tools
        ]
        body |= given(tool_choice=_tool_choice(request))
    if request.temperature is not None and "thinking" not in body:
        body["temperature"] = request.temperature
    if request.cache:
        mark_cache(body, request.model)
    body["stream"] = request.stream
    return body


def _arguments(raw: str) -> str:
    """Streamed tool input, re-serialized like a non-streamed one; cut-off JSON stays as sent."""
    if not raw.strip():
        return "{}"
    try:
        return json.dumps(json.loads(raw), ensure_ascii=False)
    except ValueError:
        return raw


@dataclass
class _Turn:
    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    signed: list[dict[str, Any]] = field(default_factory=list)  # the turn's reasoning state
    last_kind: str | None = None

    def add(self, block: dict[str, Any], where: str, arguments: str | None = None) -> None:
        kind = block.get("type")
        if kind == "text":
            self.texts.append(as_text(block.get("text"), f"{where}.text"))
        elif kind == "thinking":
            thought = as_text(block.get("thinking"), f"{where}.thinking")
            self.thoughts.append(thought)
            signature = block.get("signature")
            if isinstance(signature, str) and signature:  # unsigned thinking cannot go back
                part = {"type": "thinking", "thinking": thought, "signature": signature}
                self.signed.append({"at": len(self.calls), "part": part})
        elif kind == "redacted_thinking":
            data = block.get("data")
            if isinstance(data, str) and data:
                part = {"type": "redacted_thinking", "data": data}
                self.signed.append({"at": len(self.calls), "part": part})
        elif kind == "tool_use":
            if arguments is None:
                tool_input = as_object(block.get("input"), f"{where}.input")
                arguments = json.dumps(tool_input, ensure_ascii=False)
            name = as_text(block.get("name"), f"{where}.name")
            self.calls.append(ToolCall(as_text(block.get("id"), f"{where}.id"), name, arguments))
        else:
            return  # server tool blocks and future kinds carry nothing this layer uses
        self.last_kind = "thinking" if kind == "redacted_thinking" else str(kind)


def _completion(
    turn: _Turn, message: dict[str, Any], raw_usage: Any, request_id: str | None
) -> Completion:
    stop = message.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise Shape("stop_reason is not a string")
    split = split_thinking("".join(turn.texts), "\n".join(turn.thoughts) or None)
    reason = classify_finish(
        _STOP.get(stop or "", FinishReason.OTHER),
        content=split.content,
        has_tool_calls=bool(turn.calls),
        reasoning=split.reasoning,
        # The last block being thinking means the cap fell before the answer began.
        thinking_unfinished=split.thinking_unfinished or turn.last_kind == "thinking",
    )
    model, body_id = message.get("model"), message.get("id")
    served = model if isinstance(model, str) else ""
    state = ReasoningState.of(WIRE_FORMAT, served, turn.signed) if turn.signed else None
    return Completion(
        message=Message(
            "assistant",
            split.content,
            tuple(turn.calls),
            reasoning=split.reasoning,
            reasoning_state=state,
        ),
        finish_reason=reason,
        raw_finish_reason=stop,
        usage=usage_from_anthropic(raw_usage),
        model=served,
        request_id=request_id or (body_id if isinstance(body_id, str) else None),
        raw_usage=raw_usage if isinstance(raw_usage, dict) else {},
    )


def _decode(body: Any, request_id: str | None) -> Completion:
    message = as_object(body, "message")
    content = message.get("content")
    if not isinstance(content, list):
        raise Shape("content is not a list")
    turn = _Turn()
    for i, block in enumerate(content):
        turn.add(as_object(block, f"content[{i}]"), f"content[{i}]")
    return _completion(turn, message, message.get("usage"), request_id)


@dataclass
class _Stream:
    message: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    stopped: bool = False

    def add(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "error":
            error = event.get("error")
            error = error if isinstance(error, dict) else {}
            status = _ERROR_STATUS.get(str(error.get("type")))
            text = error.get("message") or "the stream reported an error"
            raise ProviderError(f"messages: {text}", status=status, raw_body=dump_body(event))
        if kind == "message_start":
            self.message = dict(as_object(event.get("message"), "message_start.message"))
            self.usage = dict(as_object(self.message.get("usage") or {}, "message_start usage"))
        elif kind == "content_block_start":
            index = event.get("index")
            if not isinstance(index, int):
                raise Shape("content_block_start has no index")
            self.blocks[index] = dict(as_object(event.get("content_block"), "content_block"))
        elif kind == "content_block_delta":
            index = event.get("index")
            block = self.blocks.get(index) if isinstance(index, int) else None
            delta = as_object(event.get("delta"), "content_block_delta.delta")
            key = _DELTA_KEYS.get(str(delta.get("type")))
            if block is None:
                raise Shape("content_block_delta names no started block")
            if key is not None:  # citation deltas carry nothing kept here
                block[key] = block.get(key, "") + as_text(delta.get(key), f"{delta['type']}.{key}")
        elif kind == "message_delta":
            delta = as_object(event.get("delta"), "message_delta.delta")
            if self.message is None:
                raise Shape("message_delta before message_start")
            if "stop_reason" in delta:
                self.message["stop_reason"] = delta["stop_reason"]
            # message_delta usage is cumulative: its counts replace the ones from message_start.
            usage = as_object(event.get("usage") or {}, "message_delta.usage")
            self.usage.update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True

    def completion(self, request_id: str | None) -> Completion:
        if self.message is None or not self.stopped:
            raise Shape("the stream ended before message_stop")
        turn = _Turn()
        for index in sorted(self.blocks):
            block = self.blocks[index]
            tool = block.get("type") == "tool_use"
            args = _arguments(block.get("partial_json", "")) if tool else None
            turn.add(block, f"content[{index}]", args)
        return _completion(turn, self.message, self.usage or None, request_id)


class MessagesCodec:
    wire_format = WIRE_FORMAT

    def url(self, base_url: str, request: Request) -> str:
        return join_url(base_url, "messages")

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def encode(self, request: Request) -> dict[str, Any]:
        return encode_request(request)

    def decode(self, body: Any, request_id: str | None) -> Completion:
        with malformed_as("messages", lambda: dump_body(body), request_id):
            return _decode(body, request_id)

    def decode_stream(
        self, events: Iterable[ServerSentEvent], request_id: str | None
    ) -> Completion:
        state = _Stream()
        seen: list[str] = []
        with malformed_as("messages stream", joined(seen), request_id):
            for event in events:
                seen.append(event.data)
                data = as_object(json.loads(event.data), "stream event")
                state.add(str(data.get("type") or event.event), data)
            return state.completion(request_id)
