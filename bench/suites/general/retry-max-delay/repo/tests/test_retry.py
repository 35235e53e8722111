import pytest

from netutil import TransientError, retry
from netutil.client import fetch_json


def flaky(failures, value="ok"):
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= failures:
            raise TransientError("try again")
        return value

    return fn, calls


def test_succeeds_after_transient_failures():
    waits = []
    fn, calls = flaky(2)
    assert retry(fn, attempts=3, base_delay=0.5, sleep=waits.append) == "ok"
    assert waits == [0.5, 1.0]
    assert len(calls) == 3


def test_last_error_is_raised():
    fn, calls = flaky(5)
    with pytest.raises(TransientError):
        retry(fn, attempts=3, sleep=lambda s: None)
    assert len(calls) == 3


def test_fetch_json_retries_gateway_errors():
    answers = iter([(503, ""), (200, '{"a": 1}')])
    assert fetch_json(lambda url: next(answers), "http://x", sleep=lambda s: None) == {"a": 1}
