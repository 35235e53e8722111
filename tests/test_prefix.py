import pytest

from stepswitch.util.prefix import common_prefix_len


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("", "", 0),
        ("abc", "", 0),
        ("abc", "abd", 2),
        ("abc", "abc", 3),
        ("abc", "abcdef", 3),
        ("x", "y", 0),
    ],
)
def test_common_prefix_len(a, b, expected):
    assert common_prefix_len(a, b) == expected
    assert common_prefix_len(b, a) == expected


def test_a_long_shared_prefix_is_counted_exactly():
    base = "s" * 100_000
    assert common_prefix_len(base + "a" + base, base + "b") == 100_000
