"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_match_parens():
    assert callable(solution.match_parens)
