import pytest

from grades.report import letter_grade, load_scores, mean, median, render_report

CSV = "student,score\nada,91\nbob,78.5\ncy,64\n"


def test_statistics():
    assert mean([1, 2, 3, 4]) == 2.5
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_letter_boundaries():
    assert [letter_grade(s) for s in (100, 90, 89.9, 80, 70, 60, 59.9, 0)] == list("AABBCDFF")


def test_out_of_range_score():
    with pytest.raises(ValueError):
        letter_grade(101)


def test_report():
    assert render_report(load_scores(CSV)) == (
        "ada          91.0  A\n"
        "bob          78.5  C\n"
        "cy           64.0  D\n"
        "--------------------\n"
        "mean         77.8\n"
        "median       78.5\n"
        "stdev        13.5\n"
    )
