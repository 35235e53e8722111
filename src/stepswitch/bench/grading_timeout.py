"""The per-test time limit of a graded run: a small pytest plugin, written beside each run and
loaded with `-p ssw_grading_timeout` (no dependency); a test past its limit fails with
`TIMEOUT_MARK` in its message, which the verdict reads (verdict.py)."""

from __future__ import annotations

PLUGIN = "ssw_grading_timeout"
TIMEOUT_MARK = "ssw: test timed out after"
WALL_FACTOR = 4  # a test's wall-clock backstop, as a multiple of its CPU-time limit


def backstop_s(tests: int, per_test_s: float) -> float:
    """How long `tests` hidden tests take when each runs to its wall-clock backstop (a start
    that hangs, or a machine so loaded a test gets under a quarter of a CPU): the whole-run
    limit importers write and validate warns below."""
    return tests * per_test_s * WALL_FACTOR


PLUGIN_SOURCE = f'''"""Per-test time limit for graded runs (written by stepswitch): CPU time, so
a loaded machine does not fail a test that would pass idle, with a wall-clock backstop for a
test that waits (sleeps, blocks) instead of computing."""
import faulthandler
import gc
import signal

import pytest

# Loaded before the task's conftest files and tests: what exists now (pytest, its plugins, the
# standard library) lives as long as the run. Out of the collector's sight, so the collections
# the run makes walk only what the task's code and tests make (ADR 0019 addendum).
gc.freeze()

WALL_FACTOR = {WALL_FACTOR}  # the wall backstop: this many times the CPU limit
GRACE_S = 5.0  # past the backstop plus this, a test stuck outside Python ends the whole run


def pytest_addoption(parser):
    parser.addoption("--ssw-test-timeout", type=float, default=0.0)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    limit = item.config.getoption("--ssw-test-timeout")
    if limit <= 0:
        return (yield)
    wall = limit * WALL_FACTOR

    def cpu_spent(signum, frame):
        pytest.fail(f"{TIMEOUT_MARK} {{limit:g}} s of CPU time", pytrace=False)

    def wall_passed(signum, frame):
        pytest.fail(f"{TIMEOUT_MARK} {{wall:g}} s of wall time", pytrace=False)

    previous = signal.signal(signal.SIGPROF, cpu_spent), signal.signal(signal.SIGALRM, wall_passed)
    signal.setitimer(signal.ITIMER_PROF, limit)
    signal.setitimer(signal.ITIMER_REAL, wall)
    faulthandler.dump_traceback_later(wall + GRACE_S, exit=True)
    try:
        return (yield)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])
'''
