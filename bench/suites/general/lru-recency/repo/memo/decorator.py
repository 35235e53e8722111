import functools
from collections.abc import Callable
from typing import Any

from memo.lru import LRUCache

_MISSING = object()


def memoize(maxsize: int = 128) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        cache = LRUCache(maxsize)

        @functools.wraps(fn)
        def inner(*args: Any) -> Any:
            value = cache.get(args, _MISSING)
            if value is _MISSING:
                value = fn(*args)
                cache.put(args, value)
            return value

        inner.cache_info = lambda: cache.stats  # type: ignore[attr-defined]
        inner.cache = cache  # type: ignore[attr-defined]
        return inner

    return wrap
