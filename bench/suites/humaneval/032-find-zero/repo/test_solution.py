"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_find_zero():
    assert callable(solution.find_zero)
