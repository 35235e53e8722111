from __future__ import annotations

import math
from pathlib import Path

import pytest

from stepswitch.gates.golden import (
    GoldenFormatError,
    compare,
    golden_verdict,
    parse_values,
    read_expected,
)


def test_values_within_the_tolerance_pass_and_name_the_closest_to_the_limit() -> None:
    expected = {"energy": [1.0, 2.0, 3.0], "count": 4}
    actual = {"energy": [1.0, 2.0 + 1e-9, 3.0], "count": 4, "extra": "ignored"}
    result = compare(expected, actual, rtol=1e-6, atol=0.0)
    assert result.passed
    assert result.checked == 4
    assert result.worst is not None and result.worst.key == "energy[1]"


def test_the_worst_offender_is_named_with_key_expected_actual_and_both_errors() -> None:
    expected = {"a": 1.0, "b": {"c": [10.0, 100.0]}}
    actual = {"a": 1.05, "b": {"c": [10.0, 130.0]}}
    result = compare(expected, actual, rtol=0.01, atol=0.0)
    assert not result.passed
    assert result.outside == 2
    worst = result.worst
    assert worst is not None
    assert (worst.key, worst.expected, worst.actual) == ("b.c[1]", 100.0, 130.0)
    assert worst.abs_err == pytest.approx(30.0)
    assert worst.rel_err == pytest.approx(0.3)
    summary = result.summary()
    assert "2 of 3 numbers outside rtol=0.01 atol=0" in summary
    assert "worst: b.c[1]: expected 100.0, actual 130.0 (abs error 30, rel error 0.3)" in summary


def test_the_tolerance_is_atol_plus_rtol_times_the_expected_value() -> None:
    assert compare([100.0], [100.5], rtol=0.004, atol=0.1).passed  # 0.5 <= 0.1 + 0.4
    assert not compare([100.0], [100.6], rtol=0.004, atol=0.1).passed


def test_missing_keys_wrong_lengths_and_changed_labels_are_failures() -> None:
    expected = {"x": [1, 2, 3], "y": 1.0, "label": "run-a"}
    actual = {"x": [1, 2], "label": "run-b"}
    result = compare(expected, actual, rtol=0.0, atol=0.0)
    assert not result.passed
    assert "x: expected 3 items, got 2" in result.problems
    assert "y: missing from the actual values" in result.problems
    assert "label: expected 'run-a', got 'run-b'" in result.problems


def test_nan_equals_nan_and_infinities_must_match_in_sign() -> None:
    assert compare([math.nan, math.inf], [math.nan, math.inf], rtol=0, atol=0).passed
    assert not compare([math.inf], [-math.inf], rtol=1, atol=1).passed
    assert not compare([1.0], [math.nan], rtol=1, atol=1).passed


def test_csv_values_read_as_rows_keyed_by_column() -> None:
    values = parse_values("x,energy,label\n0.1,1.5,a\n0.2,2.5,b\n", "csv")
    assert values == [
        {"x": 0.1, "energy": 1.5, "label": "a"},
        {"x": 0.2, "energy": 2.5, "label": "b"},
    ]
    result = compare(values, parse_values("x,energy,label\n0.1,1.5,a\n0.2,2.9,b\n", "csv"), 0.01, 0)
    assert result.worst is not None and result.worst.key == "[1].energy"


@pytest.mark.parametrize(
    ("text", "fmt", "why"),
    [
        ("{not json", "json", "not valid JSON"),
        ("", "json", "it is empty"),
        ("a,b\n1,2,3\n", "csv", "CSV line 2 has 3 cells, the header has 2"),
        ("a,a\n1,2\n", "csv", "the CSV header must name every column once"),
        ("a,b\n", "csv", "no rows"),
    ],
)
def test_malformed_values_raise_a_format_error_saying_why(text: str, fmt: str, why: str) -> None:
    with pytest.raises(GoldenFormatError, match=why):
        parse_values(text, fmt)  # type: ignore[arg-type]


def test_a_golden_file_without_numbers_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "golden.json"
    path.write_text('{"label": "x"}', encoding="utf-8")
    with pytest.raises(GoldenFormatError, match="no numbers"):
        read_expected(path, "json")


def test_malformed_actual_values_are_a_failing_verdict_with_the_reason() -> None:
    result = golden_verdict("golden", "g.json", {"a": 1.0}, "Traceback: boom", "json", 0.0, 0.0)
    assert not result.passed
    assert "the actual values are malformed: not valid JSON" in result.report
    assert "Traceback: boom" in result.report
