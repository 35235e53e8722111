"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_correct_bracketing():
    assert callable(solution.correct_bracketing)
