from collections import OrderedDict
from collections.abc import Hashable

from memo.stats import CacheStats

_MISSING = object()


class LRUCache:
    """Holds at most `maxsize` entries; when full, the least recently used one is evicted."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.stats = CacheStats()
        self._data: OrderedDict[Hashable, object] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def get(self, key: Hashable, default: object = None) -> object:
        value = self._data.get(key, _MISSING)
        if value is _MISSING:
            self.stats.misses += 1
            return default
        self.stats.hits += 1
        return value

    def put(self, key: Hashable, value: object) -> None:
        self._data[key] = value
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)
            self.stats.evictions += 1

    def keys(self) -> list[Hashable]:
        """Least recently used first."""
        return list(self._data)
