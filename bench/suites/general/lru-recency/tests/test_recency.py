from memo import LRUCache, memoize


def test_read_entry_survives_eviction():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert "a" in cache
    assert "b" not in cache
    assert cache.keys() == ["a", "c"]


def test_updated_entry_becomes_most_recent():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert cache.get("a") == 10
    assert "b" not in cache


def test_updating_does_not_count_as_an_eviction():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("a", 2)
    cache.put("b", 3)
    assert cache.stats.evictions == 0
    assert len(cache) == 2


def test_memoize_keeps_the_hot_key():
    calls = []

    @memoize(maxsize=2)
    def geocode(place):
        calls.append(place)
        return place.upper()

    for place in ["a", "b", "a", "c", "a"]:
        geocode(place)
    assert calls == ["a", "b", "c"]
    info = geocode.cache_info()
    assert (info.hits, info.misses, info.evictions) == (2, 3, 1)
