import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stepswitch.errors import MalformedResponse, ProviderError
from stepswitch.wire.formats.responses import ResponsesCodec
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

FIXTURES = Path(__file__).parent.parent / "fixtures" / "responses"
codec = ResponsesCodec()

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {}}})


def fixture(name: str) -> Any:
    return recorded_body("responses", name)


def stream(name: str, request_id: str | None = None) -> Completion:
    return recorded_stream(codec, "responses", name, request_id)


def test_url_and_bearer_header():
    request = Request("gpt-5-mini", (Message("user", "hi"),))
    assert codec.url("https://api.openai.com/v1/", request) == "https://api.openai.com/v1/responses"
    assert codec.headers("sk-test") == {"Authorization": "Bearer sk-test"}
    assert codec.headers(None) == {}


def test_system_prompt_becomes_instructions_and_the_body_is_not_stored():
    request = Request(
        "gpt-5-mini",
        (Message("system", "Be brief."), Message("user", "Fix the test.")),
        max_output_tokens=2048,
        temperature=0.2,
    )
    assert codec.encode(request) == {
        "model": "gpt-5-mini",
        "instructions": "Be brief.",
        "input": [{"type": "message", "role": "user", "content": "Fix the test."}],
        "store": False,
        "max_output_tokens": 2048,
        "temperature": 0.2,
        "stream": False,
    }


def test_tool_round_trip_encodes_function_call_and_output_items_by_call_id():
    call = ToolCall("call_read_1", "read_file", '{"path":"src/app.py"}')
    request = Request(
        "gpt-5-mini",
        (
            Message("user", "Read app.py"),
            Message("assistant", "", (call,), reasoning="Need the file."),
            Message("tool", "print('hi')", tool_call_id="call_read_1", name="read_file"),
        ),
        tools=(READ,),
        tool_choice="required",
        parallel_tool_calls=False,
        stream=True,
    )
    body = codec.encode(request)
    assert body["input"][1:] == [
        {
            "type": "function_call",
            "call_id": "call_read_1",
            "name": "read_file",
            "arguments": '{"path":"src/app.py"}',
        },
        {"type": "function_call_output", "call_id": "call_read_1", "output": "print('hi')"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file",
            "parameters": READ.parameters,
            "strict": False,
        }
    ]
    assert (body["tool_choice"], body["parallel_tool_calls"], body["stream"]) == (
        "required",
        False,
        True,
    )


def test_a_later_system_message_stays_in_place():
    request = Request(
        "gpt-5-mini",
        (Message("user", "a"), Message("system", "Now be terse."), Message("assistant", "ok")),
    )
    assert "instructions" not in codec.encode(request)
    assert codec.encode(request)["input"][1:] == [
        {"type": "message", "role": "system", "content": "Now be terse."},
        {"type": "message", "role": "assistant", "content": "ok"},
    ]


def test_json_schema_goes_to_text_format_and_effort_to_reasoning():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    request = Request(
        "gpt-5-mini",
        (Message("user", "Answer"),),
        response_format=JsonSchemaFormat("verdict", schema),
        reasoning_effort="low",
    )
    body = codec.encode(request)
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "verdict", "schema": schema, "strict": True}
    }
    assert body["reasoning"] == {"effort": "low"}


def test_effort_is_omitted_when_not_set_and_none_is_passed_through():
    plain = Request("gpt-4.1-mini", (Message("user", "a"),))
    assert "reasoning" not in codec.encode(plain)
    none = Request("gpt-5.1", (Message("user", "a"),), reasoning_effort="none")
    assert codec.encode(none)["reasoning"] == {"effort": "none"}


def test_reasoning_summary_and_text_decode_with_cached_and_reasoning_usage():
    completion = codec.decode(fixture("text_with_reasoning.json"), None)
    assert completion.message.content == "Replace the equality with pytest.approx(0.3)."
    assert completion.message.reasoning == (
        "The failing test compares floats exactly.\nUse pytest.approx."
    )
    assert completion.finish_reason is FinishReason.STOP
    assert completion.raw_finish_reason == "completed"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 2300
    assert completion.usage.cached_tokens == 2048
    assert completion.usage.completion_tokens == 420
    assert completion.usage.reasoning_tokens == 384
    assert completion.raw_usage["total_tokens"] == 2720
    assert completion.model == "gpt-5-mini-2025-08-07"


def test_request_id_comes_from_the_header_else_the_body_id():
    body = fixture("text_with_reasoning.json")
    assert codec.decode(body, "req_header").request_id == "req_header"
    assert codec.decode(body, None).request_id == body["id"]


def test_two_tool_calls_in_one_turn_decode_in_order():
    completion = codec.decode(fixture("two_tool_calls.json"), None)
    calls = completion.message.tool_calls
    assert [(c.id, c.name) for c in calls] == [
        ("call_read_1", "read_file"),
        ("call_grep_2", "grep"),
    ]
    assert calls[1].parsed_arguments() == {"pattern": "def parse", "path": "src"}
    assert completion.finish_reason is FinishReason.TOOL_CALLS


def test_cap_reached_while_reasoning_is_length_in_thinking_with_no_answer():
    completion = codec.decode(fixture("incomplete_in_reasoning.json"), None)
    assert completion.finish_reason is FinishReason.LENGTH_IN_THINKING
    assert completion.raw_finish_reason == "max_output_tokens"
    assert completion.answer == ""


def test_cap_reached_after_the_answer_started_is_length():
    completion = codec.decode(fixture("incomplete_with_text.json"), None)
    assert completion.finish_reason is FinishReason.LENGTH
    assert completion.answer == "Step one: open the config and"


def test_empty_message_with_completed_status_is_empty_stop():
    completion = codec.decode(fixture("empty_stop.json"), None)
    assert completion.finish_reason is FinishReason.EMPTY_STOP


def test_missing_usage_is_none_never_zero():
    completion = codec.decode(fixture("missing_usage.json"), None)
    assert completion.usage is None
    assert completion.raw_usage == {}
    assert completion.message.content == "All tests pass."


def test_refusal_is_a_content_filter_finish_with_the_refusal_text():
    completion = codec.decode(fixture("refusal.json"), None)
    assert completion.finish_reason is FinishReason.CONTENT_FILTER
    assert completion.message.content == "I can't help with that."


def test_output_that_is_not_a_list_is_malformed_and_keeps_the_body():
    with pytest.raises(MalformedResponse) as caught:
        codec.decode(fixture("malformed_output_not_list.json"), "req_1")
    assert "output" in caught.value.message
    assert '"resp_bad_01"' in caught.value.raw_body
    assert caught.value.request_id == "req_1"


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"output": [{"type": "function_call", "name": "x", "arguments": "{}"}]},
        {"output": [{"type": "message", "content": [{"type": "output_text", "text": 3}]}]},
        {"output": [], "usage": {"input_tokens": "many"}},
    ],
)
def test_wrong_shapes_raise_malformed_never_key_or_type_errors(body: Any):
    assert malformed(codec, body).raw_body


def test_a_failed_response_is_a_provider_error():
    with pytest.raises(ProviderError) as caught:
        codec.decode(fixture("failed.json"), None)
    assert not isinstance(caught.value, MalformedResponse)
    assert "failed to generate" in caught.value.message


@pytest.mark.parametrize(
    ("sse", "body"),
    [
        ("stream_text_with_reasoning.sse", "text_with_reasoning.json"),
        ("stream_two_tool_calls.sse", "two_tool_calls.json"),
        ("stream_tool_loop_turn1_encrypted.sse", "tool_loop_turn1_encrypted.json"),
        ("stream_incomplete_in_reasoning.sse", "incomplete_in_reasoning.json"),
    ],
)
def test_stream_decodes_to_the_same_completion_as_the_body(sse: str, body: str):
    assert stream(sse) == codec.decode(fixture(body), None)


def test_stream_error_event_raises_provider_error_with_the_header_request_id():
    error = stream_error(codec, "responses", "stream_error.sse", "req_stream")
    assert "server had an error" in error.message
    assert error.request_id == "req_stream"


def test_stream_that_stops_before_completion_is_malformed():
    lines = (FIXTURES / "stream_two_tool_calls.sse").read_text().splitlines(keepends=True)
    cut = [line for line in lines if "response.completed" not in line]
    with pytest.raises(MalformedResponse) as caught:
        codec.decode_stream(read_events(cut), None)
    assert "fc_01" in caught.value.raw_body


def test_stream_event_that_is_not_json_is_malformed():
    with pytest.raises(MalformedResponse):
        codec.decode_stream(read_events(["data: {oops\n", "\n"]), None)


# --- reasoning state (ADR 0009) ---

MINI = "gpt-5-mini"


def _encrypted(item_id: str, at_text: str) -> dict[str, Any]:
    return {"id": item_id, "type": "reasoning", "summary": [], "encrypted_content": at_text}


def test_encrypted_content_is_asked_for_whenever_an_effort_is_set_and_not_none():
    ask = (Message("user", "hi"),)
    assert codec.encode(Request(MINI, ask, reasoning_effort="low"))["include"] == [
        "reasoning.encrypted_content"
    ]
    for effort in (None, "none"):
        assert "include" not in codec.encode(Request(MINI, ask, reasoning_effort=effort))
    off = Request(MINI, ask, reasoning_effort="low", carry_reasoning=False)
    assert "include" not in codec.encode(off)


def test_only_reasoning_items_with_encrypted_content_become_state():
    assert codec.decode(fixture("two_tool_calls.json"), None).message.reasoning_state is None
    completion = codec.decode(fixture("tool_loop_turn1_encrypted.json"), None)
    state = completion.message.reasoning_state
    assert state is not None and state.model == "gpt-5-mini-2025-08-07"
    item = fixture("tool_loop_turn1_encrypted.json")["output"][0]
    assert state.value() == [{"at": 0, "part": item}]


def test_reasoning_items_go_back_just_before_the_item_that_followed_them():
    calls = (ToolCall("c1", "read_file", "{}"), ToolCall("c2", "grep", "{}"))
    first, second = _encrypted("rs_a", "gAAAA-one"), _encrypted("rs_b", "gAAAA-two")
    state = ReasoningState.of(
        "responses", MINI, [{"at": 0, "part": first}, {"at": 1, "part": second}]
    )
    message = Message("assistant", "Looking.", calls, reasoning_state=state)
    items = codec.encode(Request(MINI, (Message("user", "go"), message)))["input"]
    assert [(i["type"], i.get("id") or i.get("call_id")) for i in items[1:]] == [
        ("reasoning", "rs_a"),
        ("message", None),
        ("function_call", "c1"),
        ("reasoning", "rs_b"),
        ("function_call", "c2"),
    ]
    assert items[1] == first and items[4] == second


def test_reasoning_state_of_another_model_or_format_is_not_sent():
    state = ReasoningState.of("responses", MINI, [{"at": 0, "part": _encrypted("rs", "gAAAA-x")}])
    message = Message("assistant", "ok", reasoning_state=state)
    for model in ("gpt-5", "gpt-5-mini-2025-08-07"):
        assert "gAAAA-x" not in json.dumps(codec.encode(Request(model, (message,))))
    other = Message("assistant", "ok", reasoning_state=replace(state, wire_format="messages"))
    assert "gAAAA-x" not in json.dumps(codec.encode(Request(MINI, (other,))))
