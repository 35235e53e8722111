"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_double_the_difference():
    assert callable(solution.double_the_difference)
