"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_mean_absolute_deviation():
    assert callable(solution.mean_absolute_deviation)
