"""OpenAI Responses API (`POST /v1/responses`).

References: https://platform.openai.com/docs/api-reference/responses/create (request),
https://platform.openai.com/docs/api-reference/responses/object (response),
https://platform.openai.com/docs/api-reference/responses-streaming (stream events).

Function tools are sent with `strict: false`: the reference makes strict the default, and strict
mode rejects schemas that leave properties optional, which agent tool schemas often do.
Reasoning summaries are not requested (`reasoning.summary` needs a verified organization on some
models); summary or reasoning text that does come back is kept as Message.reasoning.

Reasoning state (https://platform.openai.com/docs/guides/reasoning, encrypted reasoning items):
bodies are sent with store=false, so a reasoning item can only go back with its
`encrypted_content`, which the request asks for with `include: ["reasoning.encrypted_content"]`
whenever it sets a reasoning effort other than "none" (a model that does not reason may refuse
the include). Each reasoning item that has encrypted content is kept as received, with the count
of function calls before it, and goes back as an input item in the same place: just before the
item that followed it. An item without encrypted content is not kept: with store=false the API
cannot look it up and refuses the request.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from stepswitch.errors import ProviderError
from stepswitch.util.secrets import bearer_headers
from stepswitch.wire.codec import carried_state, given, interleave, join_url
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
from stepswitch.wire.usage import usage_from_responses

WIRE_FORMAT = "responses"
INCLUDE_REASONING = "reasoning.encrypted_content"


def _assistant_items(message: Message, carried: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if message.content or not message.tool_calls:
        items.append({"type": "message", "role": "assistant", "content": message.content})
    items.extend(
        {
            "type": "function_call",
            "call_id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        for call in message.tool_calls
    )
    if carried:
        items = interleave(items, carried, lambda item: item["type"] == "function_call")
    return items


def _input_items(request: Request) -> tuple[str | None, list[dict[str, Any]]]:
    """Leading system messages become `instructions`; later ones stay in place as system items."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role == "system" and not items:
            instructions.append(message.content)
        elif message.role == "tool":
            if message.tool_call_id is None:
                raise ValueError("a tool message needs the tool_call_id it answers")
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": message.content,
                }
            )
        elif message.role == "assistant":
            items.extend(_assistant_items(message, carried_state(request, message, WIRE_FORMAT)))
        else:
            items.append({"type": "message", "role": message.role, "content": message.content})
    return ("\n\n".join(instructions) if instructions else None), items


def encode_request(request: Request) -> dict[str, Any]:
    instructions, items = _input_items(request)
    body: dict[str, Any] = {"model": request.model, "input": items, "store": False}
    if instructions is not None:
        body["instructions"] = instructions
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "strict": False,
            }
            for tool in request.tools
        ]
    body |= given(tool_choice=request.tool_choice, parallel_tool_calls=request.parallel_tool_calls)
    if request.response_format is not None:
        fmt = request.response_format
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": fmt.name,
                "schema": fmt.schema,
                "strict": fmt.strict,
            }
        }
    if request.reasoning_effort is not None:
        body["reasoning"] = {"effort": request.reasoning_effort}
        if request.carry_reasoning and request.reasoning_effort != "none":
            body["include"] = [INCLUDE_REASONING]
    body |= given(max_output_tokens=request.max_output_tokens, temperature=request.temperature)
    body["stream"] = request.stream
    return body


def _mapped_finish(resp: dict[str, Any], refused: bool) -> tuple[FinishReason, str | None]:
    status = resp.get("status")
    if status == "incomplete":
        details = resp.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        if reason == "max_output_tokens":
            return FinishReason.LENGTH, reason
        if reason == "content_filter":
            return FinishReason.CONTENT_FILTER, reason
        return FinishReason.OTHER, str(reason or status)
    # Some compatible servers leave `status` out of a finished response.
    if status in ("completed", None):
        return (FinishReason.CONTENT_FILTER if refused else FinishReason.STOP), status
    return FinishReason.OTHER, str(status)


def _completion(resp: dict[str, Any], request_id: str | None) -> Completion:
    if resp.get("status") == "failed":  # the model gave up: a provider fault, not a shape fault
        error = resp.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        raise ProviderError(
            f"responses: {message or 'the response failed'}",
            raw_body=dump_body(resp),
            request_id=request_id,
        )
    texts: list[str] = []
    refusals: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    carried: list[dict[str, Any]] = []  # the turn's reasoning state
    last_kind: Any = None
    for i, raw_item in enumerate(as_list(resp.get("output"), "output")):
        item = as_object(raw_item, f"output[{i}]")
        last_kind = item.get("type")
        if last_kind == "message":
            for j, raw_part in enumerate(as_list(item.get("content"), f"output[{i}].content")):
                part = as_object(raw_part, f"output[{i}].content[{j}]")
                if part.get("type") == "output_text":
                    texts.append(as_text(part.get("text"), f"output[{i}].content[{j}].text"))
                elif part.get("type") == "refusal":
                    refusals.append(
                        as_text(part.get("refusal"), f"output[{i}].content[{j}].refusal")
                    )
        elif last_kind == "function_call":
            calls.append(
                ToolCall(
                    id=as_text(item.get("call_id"), f"output[{i}].call_id"),
                    name=as_text(item.get("name"), f"output[{i}].name"),
                    arguments=as_text(item.get("arguments", ""), f"output[{i}].arguments"),
                )
            )
        elif last_kind == "reasoning":
            encrypted = item.get("encrypted_content")
            if isinstance(encrypted, str) and encrypted:
                carried.append({"at": len(calls), "part": copy.deepcopy(item)})
            # `summary` holds summary_text parts; `content` holds reasoning_text (open models).
            for key in ("summary", "content"):
                for k, raw_part in enumerate(as_list(item.get(key), f"output[{i}].{key}")):
                    part = as_object(raw_part, f"output[{i}].{key}[{k}]")
                    if part.get("type") in ("summary_text", "reasoning_text"):
                        thoughts.append(as_text(part.get("text"), f"output[{i}].{key}[{k}].text"))
    mapped, raw_reason = _mapped_finish(resp, bool(refusals) and not texts)
    content = "".join(texts) or "".join(refusals)
    split = split_thinking(content, "\n".join(thoughts) or None)
    reason = classify_finish(
        mapped,
        content=split.content,
        has_tool_calls=bool(calls),
        reasoning=split.reasoning,
        # The output ending on a reasoning item means the cap fell while the model was thinking.
        thinking_unfinished=split.thinking_unfinished or last_kind == "reasoning",
    )
    raw_usage = resp.get("usage")
    usage = usage_from_responses(raw_usage)
    model = resp.get("model")
    served = model if isinstance(model, str) else ""
    body_id = resp.get("id")
    state = ReasoningState.of(WIRE_FORMAT, served, carried) if carried else None
    return Completion(
        message=Message(
            "assistant",
            split.content,
            tuple(calls),
            reasoning=split.reasoning or None,
            reasoning_state=state,
        ),
        finish_reason=reason,
        raw_finish_reason=raw_reason,
        usage=usage,
        model=served,
        request_id=request_id or (body_id if isinstance(body_id, str) else None),
        raw_usage=raw_usage if isinstance(raw_usage, dict) else {},
    )


class _StreamState:
    """Rebuilds the response object from the documented events, then decodes it like a body."""

    def __init__(self) -> None:
        self.items: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] | None = None

    def _item(self, event: dict[str, Any]) -> dict[str, Any]:
        index = event.get("output_index")
        if not isinstance(index, int):
            raise Shape(f"{event.get('type')} has no output_index")
        return self.items.setdefault(index, {})

    def _append(
        self,
        kind: str,
        event: dict[str, Any],
        key: str,
        index_key: str,
        part_type: str,
        text_key: str,
    ) -> None:
        """A delta event's text added under `text_key` to its part (`key` and `index_key` find
        it); a new part's type is `part_type`."""
        part = self._part(event, key, index_key)
        part.setdefault("type", part_type)
        part[text_key] = part.get(text_key, "") + as_text(event.get("delta"), f"{kind}.delta")

    def _part(self, event: dict[str, Any], key: str, index_key: str) -> dict[str, Any]:
        parts = self._item(event).setdefault(key, [])
        index = event.get(index_key)
        if not isinstance(parts, list) or not isinstance(index, int) or index < 0:
            raise Shape(f"{event.get('type')} has no usable {index_key}")
        while len(parts) <= index:
            parts.append({})
        part = as_object(parts[index], f"{event.get('type')} part")
        return part

    def add(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "error":
            message = event.get("message") or "the stream reported an error"
            raise ProviderError(f"responses: {message}", raw_body=dump_body(event))
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            self.final = as_object(event.get("response"), f"{kind}.response")
        elif kind in ("response.output_item.added", "response.output_item.done"):
            index = event.get("output_index")
            if not isinstance(index, int):
                raise Shape(f"{kind} has no output_index")
            self.items[index] = copy.deepcopy(as_object(event.get("item"), f"{kind}.item"))
        elif kind == "response.content_part.added":
            self._part(event, "content", "content_index").update(as_object(event.get("part"), kind))
        elif kind == "response.output_text.delta":
            self._append(kind, event, "content", "content_index", "output_text", "text")
        elif kind == "response.refusal.delta":
            self._append(kind, event, "content", "content_index", "refusal", "refusal")
        elif kind == "response.function_call_arguments.delta":
            item = self._item(event)
            item["arguments"] = item.get("arguments", "") + as_text(event.get("delta"), kind)
        elif kind == "response.function_call_arguments.done":
            self._item(event)["arguments"] = as_text(event.get("arguments"), f"{kind}.arguments")
        elif kind == "response.reasoning_summary_text.delta":
            self._append(kind, event, "summary", "summary_index", "summary_text", "text")
        elif kind == "response.reasoning_text.delta":
            self._append(kind, event, "content", "content_index", "reasoning_text", "text")

    def body(self) -> dict[str, Any]:
        if self.final is None:
            raise Shape("the stream ended before response.completed or response.incomplete")
        body = dict(self.final)
        if self.items:  # the events are authoritative; the final object may omit the output
            body["output"] = [self.items[i] for i in sorted(self.items)]
        return body


class ResponsesCodec:
    wire_format = WIRE_FORMAT

    def url(self, base_url: str, request: Request) -> str:
        return join_url(base_url, "responses")

    def headers(self, api_key: str | None) -> dict[str, str]:
        return bearer_headers(api_key)

    def encode(self, request: Request) -> dict[str, Any]:
        return encode_request(request)

    def decode(self, body: Any, request_id: str | None) -> Completion:
        with malformed_as("responses", lambda: dump_body(body), request_id):
            return _completion(as_object(body, "response"), request_id)

    def decode_stream(
        self, events: Iterable[ServerSentEvent], request_id: str | None
    ) -> Completion:
        state = _StreamState()
        seen: list[str] = []
        with malformed_as("responses stream", joined(seen), request_id):
            for event in events:
                seen.append(event.data)
                data = as_object(json.loads(event.data), "stream event")
                kind = data.get("type") or event.event
                state.add(str(kind), data)
            return _completion(state.body(), request_id)
