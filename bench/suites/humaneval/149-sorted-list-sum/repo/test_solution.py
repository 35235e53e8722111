"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_sorted_list_sum():
    assert callable(solution.sorted_list_sum)
