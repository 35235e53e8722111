"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_parse_nested_parens():
    assert callable(solution.parse_nested_parens)
