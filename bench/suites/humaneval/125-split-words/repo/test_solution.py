"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_split_words():
    assert callable(solution.split_words)
