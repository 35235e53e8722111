import pytest

from netutil import PermanentError, TransientError, retry
from netutil.client import fetch_json


def failing(exc, times=100):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= times:
            raise exc
        return "ok"

    return fn, calls


def test_delays_are_capped():
    waits = []
    fn, _ = failing(TransientError("x"))
    with pytest.raises(TransientError):
        retry(fn, attempts=7, base_delay=1.0, max_delay=5.0, sleep=waits.append)
    assert waits == [1.0, 2.0, 4.0, 5.0, 5.0, 5.0]


def test_default_cap_is_thirty_seconds():
    waits = []
    fn, _ = failing(TransientError("x"))
    with pytest.raises(TransientError):
        retry(fn, attempts=10, base_delay=0.5, sleep=waits.append)
    assert max(waits) == 30.0
    assert waits[:4] == [0.5, 1.0, 2.0, 4.0]


@pytest.mark.parametrize("exc", [PermanentError("404"), KeyError("bug"), ValueError("bad")])
def test_other_errors_are_not_retried(exc):
    waits = []
    fn, calls = failing(exc)
    with pytest.raises(type(exc)):
        retry(fn, attempts=5, sleep=waits.append)
    assert len(calls) == 1
    assert waits == []


def test_retry_on_chooses_the_retried_types():
    waits = []
    fn, calls = failing(ValueError("flaky parse"), times=2)
    assert retry(fn, attempts=3, retry_on=(ValueError,), sleep=waits.append) == "ok"
    assert len(calls) == 3
    fn, calls = failing(TransientError("x"), times=1)
    with pytest.raises(TransientError):
        retry(fn, attempts=3, retry_on=(ValueError,), sleep=waits.append)
    assert len(calls) == 1


def test_fetch_json_does_not_retry_a_404():
    calls = []

    def transport(url):
        calls.append(url)
        return 404, ""

    with pytest.raises(PermanentError):
        fetch_json(transport, "http://x", attempts=4, sleep=lambda s: None)
    assert calls == ["http://x"]
