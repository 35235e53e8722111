"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_flip_case():
    assert callable(solution.flip_case)
