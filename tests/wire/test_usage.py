import pytest

from stepswitch.errors import MalformedResponse
from stepswitch.wire.types import Usage
from stepswitch.wire.usage import (
    usage_from_anthropic,
    usage_from_chat,
    usage_from_gemini,
    usage_from_responses,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"prompt_tokens": 10, "completion_tokens": 2}, Usage(10, 0, 0, 2, 0)),
        (
            {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": None},
            Usage(10, 0, 0, 2, 0),
        ),
        (
            {
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "prompt_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 2},
                "completion_tokens_details": {"reasoning_tokens": 3},
            },
            Usage(10, 8, 2, 5, 3),
        ),
        (
            {"prompt_cache_hit_tokens": 7, "prompt_cache_miss_tokens": 3, "completion_tokens": 1},
            Usage(10, 7, 0, 1, 0),
        ),
    ],
)
def test_chat_usage_shapes(raw, expected):
    assert usage_from_chat(raw) == expected


def test_responses_usage_reads_input_and_output_details():
    raw = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 60},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 25},
    }
    assert usage_from_responses(raw) == Usage(100, 60, 0, 40, 25)


def test_anthropic_input_tokens_exclude_cache_so_they_are_added():
    raw = {
        "input_tokens": 50,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 200,
        "output_tokens": 30,
    }
    usage = usage_from_anthropic(raw)
    assert usage == Usage(1250, 1000, 200, 30, 0)
    assert usage is not None and usage.uncached_prompt_tokens == 50


def test_gemini_thoughts_bill_as_output():
    raw = {
        "promptTokenCount": 900,
        "cachedContentTokenCount": 600,
        "candidatesTokenCount": 50,
        "thoughtsTokenCount": 120,
        "totalTokenCount": 1070,
    }
    assert usage_from_gemini(raw) == Usage(900, 600, 0, 170, 120)


def test_missing_usage_stays_missing():
    assert usage_from_chat(None) is None
    assert usage_from_gemini(None) is None


@pytest.mark.parametrize(
    "bad", [{"prompt_tokens": -1}, {"prompt_tokens": 1.5}, {"prompt_tokens": True}, "x"]
)
def test_a_count_that_is_not_a_count_is_malformed(bad):
    with pytest.raises(MalformedResponse):
        usage_from_chat(bad)
