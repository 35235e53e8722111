"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_make_a_pile():
    assert callable(solution.make_a_pile)
