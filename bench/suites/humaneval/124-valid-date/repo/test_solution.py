"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_valid_date():
    assert callable(solution.valid_date)
