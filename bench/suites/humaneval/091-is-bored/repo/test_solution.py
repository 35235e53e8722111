"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_is_bored():
    assert callable(solution.is_bored)
