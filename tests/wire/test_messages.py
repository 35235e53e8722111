import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import MalformedResponse
from stepswitch.wire.formats.messages import MessagesCodec, thinks_adaptively
from stepswitch.wire.formats.messages_cache import CHARS_PER_TOKEN, min_cacheable_tokens
from stepswitch.wire.sse import read_events
from stepswitch.wire.types import (
    Completion,
    FinishReason,
    JsonSchemaFormat,
    Message,
    ReasoningState,
    Request,
    ToolCall,
    ToolSpec,
)
from tests.wire.recorded import malformed, recorded_body, recorded_stream, stream_error

FIXTURES = Path(__file__).parent.parent / "fixtures" / "messages"
codec = MessagesCodec()

OLD = "claude-sonnet-4-5-20250929"  # budget_tokens thinking
NEW = "claude-opus-5"  # adaptive thinking
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {}}})
ASK = (Message("system", "Be brief."), Message("user", "Fix the test."))


def fixture(name: str) -> Any:
    return recorded_body("messages", name)


def stream(name: str, request_id: str | None = None) -> Completion:
    return recorded_stream(codec, "messages", name, request_id)


def tool_loop() -> tuple[Message, ...]:
    calls = (
        ToolCall("toolu_1", "read_file", '{"path": "a.py"}'),
        ToolCall("toolu_2", "read_file", '{"path": "b.py"}'),
    )
    return (
        *ASK,
        Message("assistant", "Reading both.", calls),
        Message("tool", "A", tool_call_id="toolu_1", name="read_file"),
        Message("tool", "B", tool_call_id="toolu_2", name="read_file"),
    )


def test_url_and_key_and_version_headers():
    request = Request(OLD, ASK)
    assert codec.url("https://api.anthropic.com/v1/", request) == (
        "https://api.anthropic.com/v1/messages"
    )
    assert codec.headers("sk-ant") == {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01"}
    assert codec.headers(None) == {"anthropic-version": "2023-06-01"}


def test_system_goes_top_level_and_max_tokens_defaults_to_4096():
    body = codec.encode(Request(OLD, ASK, temperature=0.3))
    assert body == {
        "model": OLD,
        "system": "Be brief.",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Fix the test."}]}],
        "temperature": 0.3,
        "stream": False,
    }


def test_tool_calls_become_tool_use_blocks_and_results_merge_into_one_user_turn():
    body = codec.encode(Request(OLD, tool_loop(), tools=(READ,), max_output_tokens=1000))
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading both."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "read_file",
                    "input": {"path": "a.py"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "read_file",
                    "input": {"path": "b.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "B"},
            ],
        },
    ]
    assert body["tools"] == [
        {"name": "read_file", "description": "Read a file", "input_schema": READ.parameters}
    ]
    assert body["max_tokens"] == 1000


def test_invalid_tool_arguments_from_an_earlier_turn_are_replayed_as_an_empty_object():
    call = ToolCall("toolu_9", "read_file", '{"path": ')
    body = codec.encode(Request(OLD, (*ASK, Message("assistant", "", (call,)))))
    assert body["messages"][-1]["content"] == [
        {"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {}}
    ]


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
def test_tool_choice_and_parallel_switch_map_to_the_documented_objects(
    choice: Any, parallel: Any, expected: dict[str, Any]
):
    request = Request(OLD, ASK, tools=(READ,), tool_choice=choice, parallel_tool_calls=parallel)
    assert codec.encode(request)["tool_choice"] == expected


def test_json_schema_goes_to_output_config_format():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    request = Request(OLD, ASK, response_format=JsonSchemaFormat("verdict", schema))
    assert codec.encode(request)["output_config"] == {
        "format": {"type": "json_schema", "schema": schema}
    }


@pytest.mark.parametrize(
    ("effort", "cap", "budget", "max_tokens"),
    [
        ("minimal", None, 1024, 5120),
        ("low", None, 4096, 8192),
        ("medium", None, 8192, 12288),
        ("high", None, 16384, 20480),
        ("xhigh", None, 24576, 28672),
        ("high", 8000, 6976, 8000),  # shrunk to leave 1024 for the answer
        ("low", 2048, 1024, 2048),
    ],
)
def test_older_models_get_a_thinking_budget_between_1024_and_max_tokens(
    effort: str, cap: int | None, budget: int, max_tokens: int
):
    body = codec.encode(Request(OLD, ASK, reasoning_effort=effort, max_output_tokens=cap))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == max_tokens
    assert 1024 <= body["thinking"]["budget_tokens"] < body["max_tokens"]
    assert "output_config" not in body


def test_a_cap_too_small_for_the_minimum_budget_sends_no_thinking():
    body = codec.encode(Request(OLD, ASK, reasoning_effort="high", max_output_tokens=2000))
    assert "thinking" not in body
    assert body["max_tokens"] == 2000


def test_effort_none_and_unset_send_no_thinking_and_keep_temperature():
    for effort in (None, "none"):
        body = codec.encode(Request(NEW, ASK, reasoning_effort=effort, temperature=0.5))
        assert "thinking" not in body and "output_config" not in body
        assert body["temperature"] == 0.5


def test_newer_models_think_adaptively_with_the_effort_in_output_config():
    body = codec.encode(Request(NEW, ASK, reasoning_effort="xhigh", temperature=0.5))
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "xhigh"}
    assert body["max_tokens"] == 24576 + 4096  # room for thinking plus the answer
    assert "temperature" not in body  # not allowed while thinking
    assert codec.encode(Request(NEW, ASK, reasoning_effort="minimal"))["output_config"] == {
        "effort": "low"
    }


@pytest.mark.parametrize(
    ("model", "adaptive"),
    [
        ("claude-3-7-sonnet-20250219", False),
        ("claude-opus-4-20250514", False),
        ("claude-haiku-4-5", False),
        ("claude-sonnet-4-5-20250929", False),
        ("claude-opus-4-6", True),
        ("claude-opus-4-7", True),
        ("claude-sonnet-5", True),
        ("claude-mythos-preview", True),
    ],
)
def test_thinking_mode_follows_the_model_generation(model: str, adaptive: bool):
    assert thinks_adaptively(model) is adaptive


def test_thinking_stays_off_inside_a_tool_loop_and_with_forced_tool_use():
    in_loop = codec.encode(Request(OLD, tool_loop(), tools=(READ,), reasoning_effort="high"))
    assert "thinking" not in in_loop
    adaptive = codec.encode(Request(NEW, tool_loop(), tools=(READ,), reasoning_effort="high"))
    assert "thinking" not in adaptive and adaptive["output_config"] == {"effort": "high"}
    forced = Request(OLD, ASK, tools=(READ,), tool_choice="required", reasoning_effort="high")
    assert "thinking" not in codec.encode(forced)
    fresh_turn = (*tool_loop(), Message("assistant", "Done."), Message("user", "Now b.py"))
    assert "thinking" in codec.encode(Request(OLD, fresh_turn, reasoning_effort="high"))


def test_thinking_and_text_decode_with_cache_usage_and_body_request_id():
    completion = codec.decode(fixture("thinking_and_text.json"), None)
    assert completion.message.content == "Use pytest.approx(0.3) in the assertion."
    assert (
        completion.message.reasoning == "The test compares floats with ==. pytest.approx fixes it."
    )
    assert completion.finish_reason is FinishReason.STOP
    assert completion.raw_finish_reason == "end_turn"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 4250  # input + cache read + cache write
    assert completion.usage.cached_tokens == 3000
    assert completion.usage.cache_write_tokens == 1200
    assert completion.usage.uncached_prompt_tokens == 50
    assert completion.usage.completion_tokens == 600
    assert completion.request_id == "msg_01ThinkText7Hq2"
    assert codec.decode(fixture("thinking_and_text.json"), "req_h").request_id == "req_h"


def test_two_tool_uses_in_one_turn_decode_in_order():
    completion = codec.decode(fixture("two_tool_uses.json"), None)
    calls = completion.message.tool_calls
    assert [c.id for c in calls] == [
        "toolu_01A09q90qw90lq917835lq9",
        "toolu_01B7zYx4cE7vLm2kQp3rT5w",
    ]
    assert [c.parsed_arguments() for c in calls] == [
        {"path": "src/app.py"},
        {"path": "tests/test_app.py"},
    ]
    assert completion.message.content == "I'll read both files."
    assert completion.finish_reason is FinishReason.TOOL_CALLS


def test_max_tokens_while_thinking_is_length_in_thinking():
    completion = codec.decode(fixture("max_tokens_in_thinking.json"), None)
    assert completion.finish_reason is FinishReason.LENGTH_IN_THINKING
    assert completion.answer == ""
    assert completion.message.reasoning is not None


def test_max_tokens_after_the_answer_started_is_length():
    body = fixture("max_tokens_in_thinking.json")
    body["content"].append({"type": "text", "text": "The parser is"})
    assert codec.decode(body, None).finish_reason is FinishReason.LENGTH


def test_empty_content_with_end_turn_is_empty_stop():
    completion = codec.decode(fixture("empty_end_turn.json"), None)
    assert completion.finish_reason is FinishReason.EMPTY_STOP


def test_refusal_is_content_filter():
    assert codec.decode(fixture("refusal.json"), None).finish_reason is FinishReason.CONTENT_FILTER


def test_missing_usage_is_none():
    completion = codec.decode(fixture("missing_usage.json"), None)
    assert completion.usage is None
    assert completion.finish_reason is FinishReason.STOP


def test_content_that_is_not_a_list_is_malformed_and_keeps_the_body():
    with pytest.raises(MalformedResponse) as caught:
        codec.decode(fixture("malformed_content_not_list.json"), None)
    assert "content" in caught.value.message
    assert "msg_01Broken" in caught.value.raw_body


@pytest.mark.parametrize(
    "body",
    [
        "not an object",
        {"content": [{"type": "tool_use", "id": "t", "name": "x", "input": "[]"}]},
        {"content": [{"type": "text"}]},
        {"content": [], "stop_reason": 7},
        {"content": [], "usage": {"input_tokens": -1}},
    ],
)
def test_wrong_shapes_raise_malformed_never_key_or_type_errors(body: Any):
    assert malformed(codec, body).raw_body


@pytest.mark.parametrize(
    ("sse", "body"),
    [
        ("stream_thinking_and_text.sse", "thinking_and_text.json"),
        ("stream_tool_loop_turn1_thinking.sse", "tool_loop_turn1_thinking.json"),
        ("stream_two_tool_uses.sse", "two_tool_uses.json"),
    ],
)
def test_stream_decodes_to_the_same_completion_as_the_body(sse: str, body: str):
    assert stream(sse) == codec.decode(fixture(body), None)


def test_stream_error_event_is_a_provider_error_with_the_documented_status():
    error = stream_error(codec, "messages", "stream_error.sse", "req_s")
    assert not isinstance(error, MalformedResponse)
    assert error.status == 529
    assert error.request_id == "req_s"
    assert "Overloaded" in error.message


def test_stream_cut_before_message_stop_is_malformed():
    lines = (FIXTURES / "stream_two_tool_uses.sse").read_text().splitlines(keepends=True)
    cut = [line for line in lines if "message_stop" not in line]
    with pytest.raises(MalformedResponse) as caught:
        codec.decode_stream(read_events(cut), None)
    assert "message_stop" in caught.value.message


def test_stream_tool_input_cut_by_the_cap_is_kept_as_sent():
    events = [
        '{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":3}}}',
        '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t",'
        '"name":"read_file","input":{}}}',
        '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
        '"partial_json":"{\\"path\\": \\"sr"}}',
        '{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}',
        '{"type":"message_stop"}',
    ]
    lines = [line for e in events for line in (f"data: {e}\n", "\n")]
    completion = codec.decode_stream(read_events(lines), None)
    assert completion.message.tool_calls[0].arguments == '{"path": "sr'
    assert completion.finish_reason is FinishReason.LENGTH
    assert completion.usage is not None and completion.usage.completion_tokens == 9


# --- reasoning state and prompt caching (ADR 0009) ---

SONNET = "claude-sonnet-5"
LONG_SYSTEM = "Keep every change small and tested. " * 120  # past the smallest cacheable prefix


def _bound(completion: Completion, model: str) -> Message:
    """The assistant message as the HTTP client hands it on: state keyed by the model asked for."""
    state = completion.message.reasoning_state
    assert state is not None
    return replace(completion.message, reasoning_state=replace(state, model=model))


def _loop(first: Message) -> tuple[Message, ...]:
    results = tuple(
        Message("tool", "ok", tool_call_id=call.id, name=call.name) for call in first.tool_calls
    )
    return (*ASK, first, *results)


def test_signed_and_redacted_thinking_decode_into_the_state_in_order():
    completion = codec.decode(fixture("redacted_thinking_tool_use.json"), None)
    state = completion.message.reasoning_state
    assert state is not None and state.wire_format == "messages"
    blocks = fixture("redacted_thinking_tool_use.json")["content"]
    assert state.value() == [{"at": 0, "part": blocks[0]}, {"at": 0, "part": blocks[1]}]
    assert completion.message.reasoning == "Check the config loader first."


def test_unsigned_thinking_is_not_state():
    body = fixture("thinking_and_text.json")
    del body["content"][0]["signature"]
    assert codec.decode(body, None).message.reasoning_state is None


def test_redacted_thinking_goes_back_unchanged_before_the_tool_use_and_keeps_thinking_on():
    old = "claude-3-7-sonnet-20250219"
    first = _bound(codec.decode(fixture("redacted_thinking_tool_use.json"), None), old)
    body = codec.encode(Request(old, _loop(first), tools=(READ,), reasoning_effort="high"))
    assert body["messages"][1] == {
        "role": "assistant",
        "content": fixture("redacted_thinking_tool_use.json")["content"],
    }
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16384}


def test_thinking_after_a_tool_use_goes_back_after_it():
    payload = [
        {"at": 0, "part": {"type": "thinking", "thinking": "a", "signature": "s1"}},
        {"at": 1, "part": {"type": "thinking", "thinking": "b", "signature": "s2"}},
    ]
    calls = (ToolCall("t1", "read_file", "{}"), ToolCall("t2", "read_file", "{}"))
    state = ReasoningState.of("messages", SONNET, payload)
    message = Message("assistant", "Both.", calls, reasoning_state=state)
    content = codec.encode(Request(SONNET, _loop(message), reasoning_effort="low"))["messages"][1]
    assert [b["type"] for b in content["content"]] == [
        "thinking",
        "text",
        "tool_use",
        "thinking",
        "tool_use",
    ]


def test_state_goes_only_to_its_own_format_and_model():
    first = _bound(codec.decode(fixture("tool_loop_turn1_thinking.json"), None), SONNET)
    for model in ("claude-opus-5", "claude-sonnet-5-20260915"):
        body = codec.encode(Request(model, _loop(first), reasoning_effort="high"))
        assert "signature" not in json.dumps(body) and "thinking" not in body
    foreign = replace(first, reasoning_state=replace(first.reasoning_state, wire_format="x"))  # type: ignore[type-var]
    assert "signature" not in json.dumps(
        codec.encode(Request(SONNET, _loop(foreign), reasoning_effort="high"))
    )


def test_thinking_blocks_stay_out_while_thinking_is_off():
    first = _bound(codec.decode(fixture("tool_loop_turn1_thinking.json"), None), SONNET)
    for request in (
        Request(SONNET, _loop(first)),
        Request(SONNET, _loop(first), reasoning_effort="none"),
        Request(
            SONNET, _loop(first), tools=(READ,), tool_choice="required", reasoning_effort="high"
        ),
    ):
        body = codec.encode(request)
        assert "thinking" not in body and "signature" not in json.dumps(body)


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-opus-4-5-20251101", 4096),
        ("claude-opus-4-6", 4096),
        ("claude-haiku-4-5", 4096),
        ("anthropic/claude-haiku-4-5-20251001", 4096),
        ("claude-opus-4-7", 2048),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-3-haiku-20240307", 2048),
        ("claude-opus-5", 512),
        ("claude-sonnet-5", 1024),
        ("claude-sonnet-4-5-20250929", 1024),
        ("claude-3-7-sonnet-20250219", 1024),
        ("claude-opus-5-5", 1024),  # not in the table: the common minimum
        ("some-gateway-model", 1024),
    ],
)
def test_minimum_cacheable_prefix_follows_the_model(model: str, minimum: int):
    assert min_cacheable_tokens(model) == minimum


def test_a_prefix_under_the_model_minimum_gets_no_breakpoint():
    system = "x" * (1024 * CHARS_PER_TOKEN - 200)  # under Sonnet's 1024 tokens, as estimated
    body = codec.encode(Request(SONNET, (Message("system", system), Message("user", "go"))))
    assert "cache_control" not in json.dumps(body)
    bigger = codec.encode(Request(SONNET, (Message("system", system + "y" * 400), ASK[1])))
    assert bigger["system"][0]["cache_control"] == {"type": "ephemeral"}
    haiku = codec.encode(Request("claude-haiku-4-5", (Message("system", system + "y" * 400),)))
    assert "cache_control" not in json.dumps(haiku)  # 4096 tokens for Haiku 4.5


def test_breakpoints_mark_tools_system_the_previous_turn_and_the_end_at_most_four():
    big = ToolSpec("read_file", "Read a file. " * 300, {"type": "object"})
    messages = (
        Message("system", LONG_SYSTEM),
        Message("user", "first"),
        Message("assistant", "Looking.", (ToolCall("t1", "read_file", "{}"),)),
        Message("tool", "A", tool_call_id="t1"),
        Message("assistant", "Again.", (ToolCall("t2", "read_file", "{}"),)),
        Message("tool", "B", tool_call_id="t2"),
    )
    body = codec.encode(Request(SONNET, messages, tools=(big,)))
    marked = [
        ("tools", body["tools"][-1]),
        ("system", body["system"][-1]),
        *((f"turn {i}", b) for i, t in enumerate(body["messages"]) for b in t["content"]),
    ]
    assert [where for where, block in marked if "cache_control" in block] == [
        "tools",
        "system",
        "turn 2",  # the tool result before the newest assistant turn
        "turn 4",  # the end of the request: what the next call reads
    ]
    assert json.dumps(body).count("cache_control") == 4
