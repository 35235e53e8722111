"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_special_factorial():
    assert callable(solution.special_factorial)
