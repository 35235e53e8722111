"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_check_dict_case():
    assert callable(solution.check_dict_case)
