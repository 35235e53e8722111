"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_smallest_change():
    assert callable(solution.smallest_change)
