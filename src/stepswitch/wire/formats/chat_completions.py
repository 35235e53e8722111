"""OpenAI chat-completions, as spoken by OpenAI and the compatible servers (Token Factory,
OpenRouter, vLLM, llama.cpp, Ollama). Reference: https://platform.openai.com/docs/api-reference/chat
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from stepswitch.errors import MalformedResponse
from stepswitch.util.secrets import bearer_headers
from stepswitch.wire.codec import given, join_url
from stepswitch.wire.finish import classify_finish, split_thinking
from stepswitch.wire.shape import dump_body
from stepswitch.wire.types import (
    Completion,
    FinishReason,
    Message,
    Request,
    ServerSentEvent,
    ToolCall,
    Usage,
)
from stepswitch.wire.usage import usage_from_chat

_FINISH = {
    "stop": FinishReason.STOP,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "length": FinishReason.LENGTH,
    "content_filter": FinishReason.CONTENT_FILTER,
}


def _encode_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    return out


def _text(value: Any, where: str, body: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # some servers send content as a list of text parts
        return "".join(part.get("text", "") for part in value if isinstance(part, dict))
    raise MalformedResponse(f"{where} is not text", raw_body=dump_body(body))


def _finish(
    raw_reason: Any, content: str, reasoning: str | None, calls: tuple[ToolCall, ...]
) -> tuple[FinishReason, str, str | None]:
    split = split_thinking(content, reasoning)
    mapped = _FINISH.get(str(raw_reason), FinishReason.OTHER)
    reason = classify_finish(
        mapped,
        content=split.content,
        has_tool_calls=bool(calls),
        reasoning=split.reasoning,
        thinking_unfinished=split.thinking_unfinished,
    )
    return reason, split.content, split.reasoning


class ChatCompletionsCodec:
    wire_format = "chat-completions"

    def url(self, base_url: str, request: Request) -> str:
        return join_url(base_url, "chat/completions")

    def headers(self, api_key: str | None) -> dict[str, str]:
        return bearer_headers(api_key)

    def encode(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": [_encode_message(m) for m in request.messages],
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
            body |= given(parallel_tool_calls=request.parallel_tool_calls)
        body |= given(tool_choice=request.tool_choice)
        if request.response_format is not None:
            fmt = request.response_format
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": fmt.name, "schema": fmt.schema, "strict": fmt.strict},
            }
        body |= given(
            reasoning_effort=request.reasoning_effort,
            max_tokens=request.max_output_tokens,
            temperature=request.temperature,
        )
        if request.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def decode(self, body: Any, request_id: str | None) -> Completion:
        try:
            choice = body["choices"][0]
            message = choice["message"]
            if not isinstance(message, dict):
                raise TypeError("message is not an object")
            calls = tuple(
                ToolCall(
                    id=str(call.get("id") or f"call_{i}"),
                    name=str(call["function"]["name"]),
                    arguments=_arguments(call["function"].get("arguments")),
                )
                for i, call in enumerate(message.get("tool_calls") or [])
            )
            content = _text(message.get("content"), "choices[0].message.content", body)
            reasoning = message.get("reasoning_content") or message.get("reasoning") or None
            raw_reason = choice.get("finish_reason")
            model = str(body.get("model") or "")
            raw_usage = body.get("usage")
            rid = request_id or (str(body["id"]) if body.get("id") else None)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise MalformedResponse(
                f"chat-completions response is missing {exc}", raw_body=dump_body(body)
            ) from exc
        if reasoning is not None and not isinstance(reasoning, str):
            raise MalformedResponse("reasoning is not text", raw_body=dump_body(body))
        reason, content, reasoning = _finish(raw_reason, content, reasoning, calls)
        return Completion(
            message=Message("assistant", content, calls, reasoning=reasoning),
            finish_reason=reason,
            raw_finish_reason=None if raw_reason is None else str(raw_reason),
            usage=_usage(raw_usage, body),
            model=model,
            request_id=rid,
            raw_usage=raw_usage if isinstance(raw_usage, dict) else {},
        )

    def decode_stream(
        self, events: Iterable[ServerSentEvent], request_id: str | None
    ) -> Completion:
        acc = _StreamAccumulator()
        for event in events:
            try:
                chunk = json.loads(event.data)
            except json.JSONDecodeError as exc:
                raise MalformedResponse(
                    "stream chunk is not JSON", raw_body=event.data[:20000]
                ) from exc
            acc.add(chunk)
        return acc.finish(request_id)


def _usage(raw_usage: Any, body: Any) -> Usage | None:
    try:
        return usage_from_chat(raw_usage)
    except MalformedResponse as exc:
        exc.raw_body = exc.raw_body or dump_body(body)
        raise


def _arguments(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value)  # some servers send the arguments as an object


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _StreamAccumulator:
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    raw_reason: str | None = None
    raw_usage: Any = None
    model: str = ""
    body_id: str | None = None
    chunks: int = 0

    def add(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            raise MalformedResponse("stream chunk is not an object", raw_body=dump_body(chunk))
        if "error" in chunk:
            raise MalformedResponse("stream carried an error", raw_body=dump_body(chunk))
        self.chunks += 1
        self.model = str(chunk.get("model") or self.model)
        self.body_id = self.body_id or (str(chunk["id"]) if chunk.get("id") else None)
        if chunk.get("usage") is not None:
            self.raw_usage = chunk["usage"]
        try:
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                self.content.append(_text(delta.get("content"), "delta.content", chunk))
                thought = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(thought, str):
                    self.reasoning.append(thought)
                for call in delta.get("tool_calls") or []:
                    part = self.calls.setdefault(int(call.get("index", 0)), _PartialCall())
                    part.id = part.id or str(call.get("id") or "")
                    fn = call.get("function") or {}
                    part.name = part.name or str(fn.get("name") or "")
                    part.arguments.append(_arguments(fn.get("arguments")))
                if choice.get("finish_reason"):
                    self.raw_reason = str(choice["finish_reason"])
        except (TypeError, ValueError, AttributeError) as exc:
            raise MalformedResponse(f"bad stream chunk: {exc}", raw_body=dump_body(chunk)) from exc

    def finish(self, request_id: str | None) -> Completion:
        if self.chunks == 0:
            raise MalformedResponse("stream ended before any chunk", raw_body="")
        calls = tuple(
            ToolCall(id=p.id or f"call_{i}", name=p.name, arguments="".join(p.arguments))
            for i, p in sorted(self.calls.items())
        )
        reason, content, reasoning = _finish(
            self.raw_reason, "".join(self.content), "".join(self.reasoning) or None, calls
        )
        return Completion(
            message=Message("assistant", content, calls, reasoning=reasoning),
            finish_reason=reason,
            raw_finish_reason=self.raw_reason,
            usage=_usage(self.raw_usage, self.raw_usage),
            model=self.model,
            request_id=request_id or self.body_id,
            raw_usage=self.raw_usage if isinstance(self.raw_usage, dict) else {},
        )
