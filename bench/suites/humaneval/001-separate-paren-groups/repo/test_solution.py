"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_separate_paren_groups():
    assert callable(solution.separate_paren_groups)
