"""The scripted provider: replays a YAML script of completions over a loopback server that
speaks chat-completions, so a run exercises the real client, codec and tools. Nothing made
with it says anything about model quality; every record it touches is labelled scripted.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from stepswitch.fakes.loopback import LoopbackServer, RecordedRequest, Reply
from stepswitch.util.config_model import Strict, dotted, load_model
from stepswitch.util.prefix import common_prefix_len


class ScriptedToolCall(Strict):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class ScriptedUsage(Strict):
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)


class ScriptedReply(Strict):
    expect_model: str | None = None  # fail loudly when routing sent this call elsewhere
    content: str = ""
    reasoning: str | None = None
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    finish_reason: Literal["stop", "tool_calls", "length"] | None = None
    usage: ScriptedUsage | None = None  # None: estimated from the request (4 chars a token)
    omit_usage: bool = False  # answer without usage, as some servers do
    delay_s: float = Field(default=0.0, ge=0, le=600)  # answer this late (a slow provider)


class Script(Strict):
    """Replies to replay in order; or `tour: true`, canned replies that fit any repository
    (fakes/tour.py): each step says it is scripted, nothing is edited, reviews approve."""

    replies: list[ScriptedReply] = Field(default_factory=list)
    tour: bool = False
    # Written by `ssw run --record` (fakes/recording.py): what it was recorded from, and the
    # policy that replays it, used when the run names no policy of its own.
    recorded: str | None = None
    policy: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _something_to_say(self) -> Script:
        if self.tour == bool(self.replies):
            raise ValueError("give either replies (at least one) or tour: true")
        return self


def load_script(path: Path) -> Script:
    return load_model(
        path,
        Script,
        "yaml",
        what="script",
        fix="name a YAML script of replies, e.g. script.yaml",
        key=lambda error: dotted(error["loc"], "(top level)"),
        fix_for="see src/stepswitch/fakes/scripted.py",
    )


def _tokens(chars: int) -> int:
    return max(1, (chars + 3) // 4)


class ScriptedResponder:
    """Answers each chat-completions request with the script's next reply."""

    def __init__(self, script: Script) -> None:
        self._tour = script.tour
        self._replies = list(script.replies)
        self._served = 0
        self._last_prompt: dict[str, str] = {}  # per model: what a provider cache would hold
        self._lock = threading.Lock()

    @property
    def served(self) -> int:
        return self._served

    @property
    def remaining(self) -> int:
        return len(self._replies) - self._served

    def _next(self, body: dict[str, Any]) -> ScriptedReply | Reply:
        if self._tour:
            from stepswitch.fakes.tour import tour_reply  # it builds on this module's replies

            self._served += 1
            return tour_reply(body)
        if self._served >= len(self._replies):
            return _error(
                400,
                f"scripted provider: the script has {len(self._replies)} replies and the run "
                f"asked for reply #{self._served + 1}: a script replays one run, and this one "
                "went another way (a reply's tool call that did not fit this repository or "
                "task). Try `ssw demo --repo PATH`, whose scripted tour fits any repository",
            )
        reply = self._replies[self._served]
        self._served += 1
        return reply

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            body = request.json()
            model = str(body.get("model", ""))
            reply = self._next(body)
            if isinstance(reply, Reply):
                return reply
            if reply.expect_model and reply.expect_model != model:
                return _error(
                    400,
                    f"scripted provider: reply #{self._served} expects model "
                    f"{reply.expect_model!r}, the call asked for {model!r}",
                )
            prompt = json.dumps(body.get("messages", []))
            cached_chars = common_prefix_len(prompt, self._last_prompt.get(model, ""))
            self._last_prompt[model] = prompt
            body = completion_body(reply, model, self._served, prompt, cached_chars)
            return Reply(body=body, delay_s=reply.delay_s)


def _error(status: int, message: str) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "scripted"}})


def completion_body(
    reply: ScriptedReply, model: str, number: int, prompt: str, cached_chars: int
) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{number}_{i}",
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(call.arguments),
            },
        }
        for i, call in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if calls:
        message["tool_calls"] = calls
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    finish = reply.finish_reason or ("tool_calls" if calls else "stop")
    body: dict[str, Any] = {
        "id": f"scripted-{number}",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    if not reply.omit_usage:
        body["usage"] = _usage(reply, prompt, cached_chars, calls)
    return body


def _usage(
    reply: ScriptedReply, prompt: str, cached_chars: int, calls: list[dict[str, Any]]
) -> dict[str, Any]:
    if reply.usage is not None:
        u = reply.usage
        prompt_tokens, cached = u.prompt_tokens, u.cached_tokens
        completion, reasoning = u.completion_tokens, u.reasoning_tokens
    else:
        # Estimated like a provider's prefix cache: the part that repeats the previous prompt.
        prompt_tokens = _tokens(len(prompt))
        cached = min(prompt_tokens, cached_chars // 4)
        out_chars = len(reply.content) + len(json.dumps(calls)) if calls else len(reply.content)
        reasoning = _tokens(len(reply.reasoning)) if reply.reasoning else 0
        completion = _tokens(out_chars) + reasoning
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def start_scripted_server(script: Script) -> tuple[LoopbackServer, ScriptedResponder]:
    responder = ScriptedResponder(script)
    return LoopbackServer(responder).start(), responder
