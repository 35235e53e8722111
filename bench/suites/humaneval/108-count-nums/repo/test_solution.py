"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_count_nums():
    assert callable(solution.count_nums)
