"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_unique_digits():
    assert callable(solution.unique_digits)
