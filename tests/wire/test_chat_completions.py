from pathlib import Path

import pytest

from stepswitch.errors import MalformedResponse
from stepswitch.wire.formats.chat_completions import ChatCompletionsCodec
from stepswitch.wire.sse import read_events
from stepswitch.wire.types import (
    FinishReason,
    JsonSchemaFormat,
    Message,
    Request,
    ToolCall,
    ToolSpec,
)
from tests.wire.recorded import recorded_body

FIXTURES = Path(__file__).parent.parent / "fixtures" / "chat_completions"
codec = ChatCompletionsCodec()


def fixture(name: str) -> dict:
    return recorded_body("chat_completions", name)


def test_two_tool_calls_in_one_turn_decode_in_order_with_cached_and_reasoning_usage():
    completion = codec.decode(fixture("tool_calls_parallel.json"), None)
    assert [c.name for c in completion.message.tool_calls] == ["read", "search"]
    assert completion.message.tool_calls[0].parsed_arguments() == {"path": "src/app.py"}
    assert completion.finish_reason is FinishReason.TOOL_CALLS
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 1200
    assert completion.usage.cached_tokens == 1024
    assert completion.usage.reasoning_tokens == 32
    assert completion.usage.uncached_prompt_tokens == 176
    assert completion.request_id == "chatcmpl-abc123"


def test_header_request_id_wins_over_body_id():
    completion = codec.decode(fixture("tool_calls_parallel.json"), "req-from-header")
    assert completion.request_id == "req-from-header"


def test_reasoning_content_is_kept_apart_and_null_prompt_details_are_fine():
    completion = codec.decode(fixture("reasoning_content_null_details.json"), None)
    assert completion.message.content == "The bug is in parse()."
    assert completion.message.reasoning == "Look at parse first."
    assert completion.usage is not None and completion.usage.cached_tokens == 0
    assert completion.finish_reason is FinishReason.STOP


def test_top_level_cache_hit_tokens_count_as_cached():
    completion = codec.decode(fixture("deepseek_cache_hit_miss.json"), None)
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.cached_tokens) == (2000, 1920)


def test_cut_while_thinking_is_flagged_and_never_an_answer():
    completion = codec.decode(fixture("length_in_thinking.json"), None)
    assert completion.finish_reason is FinishReason.LENGTH_IN_THINKING
    assert completion.answer == ""
    assert completion.message.content == ""
    assert "read the file" in (completion.message.reasoning or "")


def test_closed_think_tags_move_to_reasoning_and_leave_the_answer():
    body = fixture("empty_stop.json")
    body["choices"][0]["message"]["content"] = "<think>check tests</think>Done."
    completion = codec.decode(body, None)
    assert completion.message.content == "Done."
    assert completion.message.reasoning == "check tests"
    assert completion.finish_reason is FinishReason.STOP


def test_empty_content_with_stop_is_explicit():
    completion = codec.decode(fixture("empty_stop.json"), None)
    assert completion.finish_reason is FinishReason.EMPTY_STOP
    assert completion.raw_finish_reason == "stop"


def test_missing_usage_is_none_not_zero():
    assert codec.decode(fixture("missing_usage.json"), None).usage is None


@pytest.mark.parametrize(
    "body",
    [
        {"choices": []},
        {"choices": [{"message": "text"}]},
        {"choices": [{"message": {"content": 3}}]},
        {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}},
        [],
    ],
)
def test_malformed_bodies_raise_malformed_response_with_the_raw_body(body):
    with pytest.raises(MalformedResponse) as info:
        codec.decode(body, None)
    assert info.value.raw_body


def test_stream_accumulates_to_the_same_completion_as_the_plain_response():
    lines = (FIXTURES / "stream_tool_calls.sse").read_text().splitlines()
    streamed = codec.decode_stream(read_events(lines), None)
    plain = codec.decode(fixture("tool_calls_parallel.json"), None)
    assert streamed.message.tool_calls == plain.message.tool_calls
    assert streamed.usage == plain.usage
    assert streamed.finish_reason is FinishReason.TOOL_CALLS
    assert streamed.message.reasoning == "Need two reads."


def test_stream_with_a_non_json_chunk_is_malformed():
    with pytest.raises(MalformedResponse):
        codec.decode_stream(read_events(["data: {not json", ""]), None)


def test_encode_tool_round_trip_schema_effort_and_stream_options():
    request = Request(
        model="m",
        messages=(
            Message("system", "be brief"),
            Message("user", "fix it"),
            Message("assistant", "", (ToolCall("c1", "read", '{"path":"a.py"}'),)),
            Message("tool", "1: x = 1", tool_call_id="c1", name="read"),
        ),
        tools=(ToolSpec("read", "read a file", {"type": "object"}),),
        tool_choice="auto",
        parallel_tool_calls=True,
        response_format=JsonSchemaFormat("verdict", {"type": "object"}),
        reasoning_effort="low",
        max_output_tokens=512,
        temperature=0.2,
        stream=True,
    )
    body = codec.encode(request)
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read", "arguments": '{"path":"a.py"}'},
            }
        ],
    }
    assert body["messages"][3] == {"role": "tool", "content": "1: x = 1", "tool_call_id": "c1"}
    assert body["tools"][0]["function"]["name"] == "read"
    assert body["parallel_tool_calls"] is True
    assert body["response_format"]["json_schema"]["name"] == "verdict"
    assert body["reasoning_effort"] == "low"
    assert body["max_tokens"] == 512
    assert body["stream_options"] == {"include_usage": True}


def test_encode_omits_what_was_not_asked_for():
    body = codec.encode(Request(model="m", messages=(Message("user", "hi"),)))
    assert set(body) == {"model", "messages"}
