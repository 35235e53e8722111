"""`util.on_thread`: work started on a thread, its value or its exception back to the caller."""

from __future__ import annotations

import threading

import pytest

from stepswitch.errors import UsageError
from stepswitch.util.on_thread import OnThread


def test_the_work_runs_on_its_own_thread_and_its_value_comes_back() -> None:
    ran_on: list[str] = []

    def work() -> int:
        ran_on.append(threading.current_thread().name)
        return 42

    assert OnThread(work, "ssw-test-work").result() == 42
    assert ran_on == ["ssw-test-work"]


def test_what_the_work_raised_is_raised_to_the_caller_and_the_thread_is_gone() -> None:
    def refuse() -> None:
        raise UsageError("gates: the tests cannot import calc")

    work = OnThread(refuse, "ssw-test-refusal")
    with pytest.raises(UsageError, match="cannot import calc"):
        work.result()
    assert "ssw-test-refusal" not in [t.name for t in threading.enumerate()]
