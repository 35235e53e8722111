import pytest

from timefmt import format_duration


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (59, "59s"), (60, "1m"), (5400, "1h 30m"), (93_784, "1d 2h 3m 4s")],
)
def test_format(seconds, text):
    assert format_duration(seconds) == text


def test_negative_is_refused():
    with pytest.raises(ValueError):
        format_duration(-1)
