"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_compare_one():
    assert callable(solution.compare_one)
