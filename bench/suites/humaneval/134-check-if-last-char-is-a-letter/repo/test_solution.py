"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_check_if_last_char_is_a_letter():
    assert callable(solution.check_if_last_char_is_a_letter)
