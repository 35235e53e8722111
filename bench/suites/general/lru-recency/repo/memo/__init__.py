"""A least-recently-used cache and a memoizing decorator built on it."""

from memo.decorator import memoize
from memo.lru import LRUCache

__all__ = ["LRUCache", "memoize"]
