"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_strange_sort_list():
    assert callable(solution.strange_sort_list)
