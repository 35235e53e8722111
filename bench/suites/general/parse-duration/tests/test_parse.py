import pytest

from timefmt import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("1h30m", 5400),
        ("1h 30m", 5400),
        ("2d 4h", 187_200),
        ("1h 30m 15s", 5415),
        ("1H30M", 5400),
        ("1.5h", 5400),
        ("0.5m", 30),
        ("45", 45),
        ("0s", 0),
        ("  10m  ", 600),
    ],
)
def test_parse(text, seconds):
    assert parse_duration(text) == seconds
    assert isinstance(parse_duration(text), int)


@pytest.mark.parametrize("text", ["", "   ", "10x", "h", "-5m", "1..5h", "m10", "5 minutes"])
def test_bad_text_is_refused_with_the_text_quoted(text):
    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    message = str(caught.value)
    assert repr(text) in message or f'"{text}"' in message


def test_round_trip():
    for seconds in [0, 1, 59, 61, 3599, 3600, 86_399, 86_400, 93_784, 10**7]:
        assert parse_duration(format_duration(seconds)) == seconds
