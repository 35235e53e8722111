"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_make_palindrome():
    assert callable(solution.make_palindrome)
