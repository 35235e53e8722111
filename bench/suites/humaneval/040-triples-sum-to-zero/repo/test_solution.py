"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_triples_sum_to_zero():
    assert callable(solution.triples_sum_to_zero)
