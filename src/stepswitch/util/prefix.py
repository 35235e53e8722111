"""How much of one prompt repeats another from its start: what a provider's prefix cache serves."""

from __future__ import annotations


def common_prefix_len(a: str, b: str) -> int:
    """Length of the longest common prefix, by binary search over slice comparisons (in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
