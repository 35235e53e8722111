"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_sort_numbers():
    assert callable(solution.sort_numbers)
