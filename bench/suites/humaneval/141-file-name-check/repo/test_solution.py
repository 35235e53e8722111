"""The stub imports and defines the function to write (HumanEval shows no test)."""

import solution


def test_solution_defines_file_name_check():
    assert callable(solution.file_name_check)
