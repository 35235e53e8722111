import pytest

from memo import LRUCache, memoize


def test_put_and_get():
    cache = LRUCache(2)
    cache.put("a", 1)
    assert cache.get("a") == 1
    assert cache.get("zzz") is None


def test_oldest_entry_goes_when_full():
    cache = LRUCache(2)
    for key in "abc":
        cache.put(key, key.upper())
    assert "a" not in cache
    assert len(cache) == 2


def test_memoize_calls_once_per_argument():
    calls = []

    @memoize(maxsize=8)
    def square(x):
        calls.append(x)
        return x * x

    assert [square(2), square(2), square(3)] == [4, 4, 9]
    assert calls == [2, 3]
    assert square.cache_info().hits == 1


def test_maxsize_must_be_positive():
    with pytest.raises(ValueError):
        LRUCache(0)
