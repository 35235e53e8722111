"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_largest_prime_factor():
    assert callable(solution.largest_prime_factor)
