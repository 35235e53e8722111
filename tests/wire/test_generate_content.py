from dataclasses import replace
from typing import Any

import pytest

from stepswitch.errors import MalformedResponse
from stepswitch.wire.formats.generate_content import (
    SIGNATURE_PLACEHOLDER,
    GenerateContentCodec,
    uses_thinking_levels,
)
from stepswitch.wire.sse import read_events
from stepswitch.wire.types import (
    Completion,
    FinishReason,
    JsonSchemaFormat,
    Message,
    Request,
    ToolCall,
    ToolSpec,
)
from tests.wire.recorded import malformed, recorded_body, recorded_stream, stream_error

codec = GenerateContentCodec()
BASE = "https://generativelanguage.googleapis.com/v1beta/"

NEW = "gemini-3.5-flash"  # thinkingLevel, thought signatures checked
OLD = "gemini-2.5-flash"  # thinkingBudget
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {}}})
ASK = (Message("system", "Be brief."), Message("user", "Fix the test."))


def fixture(name: str) -> Any:
    return recorded_body("generate_content", name)


def stream(name: str, request_id: str | None = None) -> Completion:
    return recorded_stream(codec, "generate_content", name, request_id)


def tool_loop(*, named: bool = True) -> tuple[Message, ...]:
    calls = (
        ToolCall("call_0", "read_file", '{"path": "a.py"}'),
        ToolCall("call_1", "grep", '{"pattern": "x"}'),
    )
    return (
        *ASK,
        Message("assistant", "Looking.", calls),
        Message(
            "tool", '{"text": "A"}', tool_call_id="call_0", name="read_file" if named else None
        ),
        Message("tool", "no match", tool_call_id="call_1", name="grep" if named else None),
    )


def test_url_puts_model_and_stream_mode_in_the_path_and_key_in_a_header():
    assert codec.url(BASE, Request(NEW, ASK)) == f"{BASE}models/{NEW}:generateContent"
    streamed = Request(f"models/{NEW}", ASK, stream=True)
    assert codec.url(BASE, streamed) == f"{BASE}models/{NEW}:streamGenerateContent?alt=sse"
    assert codec.headers("AIza-test") == {"x-goog-api-key": "AIza-test"}
    assert codec.headers(None) == {}


def test_system_goes_to_system_instruction_and_limits_to_generation_config():
    body = codec.encode(Request(NEW, ASK, max_output_tokens=1024, temperature=0.2, stream=True))
    assert body == {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"role": "user", "parts": [{"text": "Fix the test."}]}],
        "generationConfig": {"maxOutputTokens": 1024, "temperature": 0.2},
    }


def test_tool_round_trip_uses_function_call_and_merged_function_response_parts():
    body = codec.encode(Request(OLD, tool_loop(), tools=(READ,), tool_choice="required"))
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Looking."},
                {"functionCall": {"name": "read_file", "args": {"path": "a.py"}}},
                {"functionCall": {"name": "grep", "args": {"pattern": "x"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_file", "response": {"text": "A"}}},
                {"functionResponse": {"name": "grep", "response": {"result": "no match"}}},
            ],
        },
    ]
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "read_file",
                    "description": "Read a file",
                    "parametersJsonSchema": READ.parameters,
                }
            ]
        }
    ]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


def test_tool_result_without_a_name_takes_it_from_the_call_it_answers():
    body = codec.encode(Request(OLD, tool_loop(named=False)))
    names = [p["functionResponse"]["name"] for p in body["contents"][-1]["parts"]]
    assert names == ["read_file", "grep"]
    orphan = Message("tool", "x", tool_call_id="call_missing")
    with pytest.raises(ValueError):
        codec.encode(Request(OLD, (*ASK, orphan)))


def test_json_results_that_are_not_objects_are_wrapped_as_result():
    listing = Message("tool", "[1, 2]", tool_call_id="call_1", name="grep")
    body = codec.encode(Request(OLD, (*tool_loop()[:-1], listing)))
    response = body["contents"][-1]["parts"][-1]["functionResponse"]["response"]
    assert response == {"result": [1, 2]}


def test_gemini_3_current_turn_calls_carry_the_signature_placeholder_on_the_first_call_only():
    parts = codec.encode(Request(NEW, tool_loop()))["contents"][1]["parts"]
    assert parts[1]["thoughtSignature"] == SIGNATURE_PLACEHOLDER
    assert "thoughtSignature" not in parts[2]


def test_no_placeholder_for_earlier_turns_or_for_models_before_gemini_3():
    earlier_turn = (*tool_loop(), Message("assistant", "Done."), Message("user", "Next"))
    for request in (Request(NEW, earlier_turn), Request(OLD, tool_loop())):
        parts = codec.encode(request)["contents"][1]["parts"]
        assert all("thoughtSignature" not in part for part in parts)


@pytest.mark.parametrize(
    ("choice", "mode"), [("auto", "AUTO"), ("required", "ANY"), ("none", "NONE")]
)
def test_tool_choice_maps_to_function_calling_mode(choice: Any, mode: str):
    body = codec.encode(Request(NEW, ASK, tools=(READ,), tool_choice=choice))
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": mode}}


def test_json_schema_uses_response_json_schema_with_the_json_mime_type():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    request = Request(NEW, ASK, response_format=JsonSchemaFormat("verdict", schema))
    assert codec.encode(request)["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": schema,
    }


@pytest.mark.parametrize(
    ("model", "effort", "config"),
    [
        (NEW, "minimal", {"thinkingLevel": "minimal", "includeThoughts": True}),
        (NEW, "high", {"thinkingLevel": "high", "includeThoughts": True}),
        (NEW, "xhigh", {"thinkingLevel": "high", "includeThoughts": True}),
        (OLD, "low", {"thinkingBudget": 1024, "includeThoughts": True}),
        (OLD, "high", {"thinkingBudget": 24576, "includeThoughts": True}),
        (OLD, "none", {"thinkingBudget": 0}),
        (NEW, "none", {"thinkingBudget": 0}),
    ],
)
def test_effort_maps_to_thinking_config(model: str, effort: str, config: dict[str, Any]):
    body = codec.encode(Request(model, ASK, reasoning_effort=effort))
    assert body["generationConfig"]["thinkingConfig"] == config


def test_no_effort_sends_no_thinking_config():
    assert "generationConfig" not in codec.encode(Request(NEW, ASK))


@pytest.mark.parametrize(
    ("model", "levels"),
    [
        ("gemini-3.1-pro-preview", True),
        ("models/gemini-3.5-flash", True),
        (OLD, False),
        ("gemma-3-27b-it", False),
    ],
)
def test_thinking_levels_start_with_gemini_3(model: str, levels: bool):
    assert uses_thinking_levels(model) is levels


def test_thought_and_text_decode_with_cached_and_thought_usage():
    completion = codec.decode(fixture("thought_and_text.json"), None)
    assert completion.message.content == "Use pytest.approx(0.3) in the assertion."
    assert completion.message.reasoning == "The assertion compares floats exactly; approx fixes it."
    assert completion.finish_reason is FinishReason.STOP
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 5200
    assert completion.usage.cached_tokens == 4096
    assert completion.usage.completion_tokens == 600  # candidates + thoughts
    assert completion.usage.reasoning_tokens == 480
    assert completion.model == "gemini-3.5-flash"
    assert completion.request_id == "mAitaLmkHPPlz7IPvtfUqQ4"
    assert codec.decode(fixture("thought_and_text.json"), "hdr").request_id == "hdr"


def test_two_function_calls_in_one_turn_decode_in_order_with_stable_ids():
    completion = codec.decode(fixture("two_function_calls.json"), None)
    calls = completion.message.tool_calls
    assert [(c.id, c.name) for c in calls] == [("call_0", "read_file"), ("call_1", "grep")]
    assert calls[1].parsed_arguments() == {"pattern": "def parse", "path": "src"}
    assert completion.finish_reason is FinishReason.TOOL_CALLS
    assert completion.raw_finish_reason == "STOP"


def test_a_function_call_id_from_gemini_is_kept():
    body = fixture("two_function_calls.json")
    body["candidates"][0]["content"]["parts"][0]["functionCall"]["id"] = "fc-abc"
    ids = [c.id for c in codec.decode(body, None).message.tool_calls]
    assert ids == ["fc-abc", "call_1"]


def test_max_tokens_while_thinking_is_length_in_thinking():
    completion = codec.decode(fixture("max_tokens_in_thought.json"), None)
    assert completion.finish_reason is FinishReason.LENGTH_IN_THINKING
    assert completion.answer == ""


def test_stop_with_no_parts_is_empty_stop():
    completion = codec.decode(fixture("empty_stop.json"), None)
    assert completion.finish_reason is FinishReason.EMPTY_STOP
    assert completion.usage is not None and completion.usage.completion_tokens == 0


def test_safety_stop_and_blocked_prompt_are_content_filter():
    safety = codec.decode(fixture("safety.json"), None)
    assert (safety.finish_reason, safety.raw_finish_reason) == (
        FinishReason.CONTENT_FILTER,
        "SAFETY",
    )
    blocked = codec.decode(fixture("prompt_blocked.json"), None)
    assert blocked.finish_reason is FinishReason.CONTENT_FILTER
    assert blocked.raw_finish_reason == "PROHIBITED_CONTENT"
    assert blocked.message.content == ""


def test_malformed_function_call_finish_is_other():
    body = fixture("empty_stop.json")
    body["candidates"][0]["finishReason"] = "MALFORMED_FUNCTION_CALL"
    assert codec.decode(body, None).finish_reason is FinishReason.OTHER


def test_missing_usage_is_none():
    completion = codec.decode(fixture("missing_usage.json"), None)
    assert completion.usage is None and completion.raw_usage == {}
    assert completion.message.content == "All tests pass."


def test_parts_that_are_not_a_list_are_malformed_and_keep_the_body():
    with pytest.raises(MalformedResponse) as caught:
        codec.decode(fixture("malformed_parts_not_list.json"), None)
    assert "parts" in caught.value.message
    assert "bad-parts" in caught.value.raw_body


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"candidates": "none"},
        {"candidates": [{"content": {"parts": [{"functionCall": {"args": {}}}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": "x", "args": []}}]}}]},
        {"candidates": [{"content": {"parts": []}, "finishReason": 1}]},
        {"candidates": [], "promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": []},
    ],
)
def test_wrong_shapes_raise_malformed_never_key_or_type_errors(body: Any):
    assert malformed(codec, body).raw_body


@pytest.mark.parametrize(
    ("sse", "body"),
    [
        ("stream_thought_and_text.sse", "thought_and_text.json"),
        ("stream_two_function_calls.sse", "two_function_calls.json"),
    ],
)
def test_stream_decodes_to_the_same_completion_as_the_body(sse: str, body: str):
    assert stream(sse) == codec.decode(fixture(body), None)


def test_stream_error_chunk_is_a_provider_error_with_its_code():
    error = stream_error(codec, "generate_content", "stream_error.sse", "req_g")
    assert not isinstance(error, MalformedResponse)
    assert error.status == 503
    assert error.request_id == "req_g"


def test_empty_stream_is_malformed():
    with pytest.raises(MalformedResponse):
        codec.decode_stream(read_events([]), None)


# --- thought signatures as reasoning state (ADR 0009) ---

PRO = "gemini-3.1-pro-preview"


def _bound(body: Any, model: str = PRO) -> Message:
    message = codec.decode(body, None).message
    assert message.reasoning_state is not None
    return replace(message, reasoning_state=replace(message.reasoning_state, model=model))


def _answered(message: Message) -> tuple[Message, ...]:
    return tuple(
        Message("tool", "{}", tool_call_id=call.id, name=call.name) for call in message.tool_calls
    )


def test_signatures_decode_by_call_position_and_the_text_part():
    state = codec.decode(fixture("two_function_calls.json"), None).message.reasoning_state
    assert state is not None and state.model == "gemini-3.1-pro-preview"
    assert state.value() == {"calls": ["CiQBcsjafB7Mz0k1c3Zk2yqR", None], "text": None}
    signed = codec.decode(fixture("sequential_call_signed.json"), None).message.reasoning_state
    assert signed is not None
    assert signed.value() == {
        "calls": ["CiQBstepTwoCallSignature7w"],
        "text": "CiQBsignedTextOfStepTwoXq",
    }
    assert codec.decode(fixture("thought_and_text.json"), None).message.reasoning_state is None


def test_every_step_of_a_sequential_loop_sends_its_own_signatures_back():
    step_one = _bound(fixture("two_function_calls.json"))
    step_two = _bound(fixture("sequential_call_signed.json"))
    messages = (*ASK, step_one, *_answered(step_one), step_two, *_answered(step_two))
    contents = codec.encode(Request(PRO, messages))["contents"]
    model_turns = [c["parts"] for c in contents if c["role"] == "model"]
    assert model_turns == [
        fixture("two_function_calls.json")["candidates"][0]["content"]["parts"],
        fixture("sequential_call_signed.json")["candidates"][0]["content"]["parts"],
    ]
    assert SIGNATURE_PLACEHOLDER not in str(contents)


def test_signatures_of_another_model_give_way_to_the_placeholder():
    step_one = _bound(fixture("two_function_calls.json"), model="gemini-2.5-pro")
    body = codec.encode(Request(PRO, (*ASK, step_one, *_answered(step_one))))
    parts = body["contents"][1]["parts"]
    assert parts[0]["thoughtSignature"] == SIGNATURE_PLACEHOLDER
    assert "thoughtSignature" not in parts[1]
    off = Request(PRO, (*ASK, _bound(fixture("two_function_calls.json"))), carry_reasoning=False)
    assert codec.encode(off)["contents"][1]["parts"][0]["thoughtSignature"] == SIGNATURE_PLACEHOLDER
