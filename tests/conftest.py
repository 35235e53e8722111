"""The whole suite: the longest test files first, so that the workers of `pytest -n` (the README's
test command) finish together instead of one of them running a long file alone at the end; and
no anyio plugin in the pytest runs the tests start (ADR 0035).

The list is the longest files of one run with `--junitxml` (2026-12-07, the README's command,
seconds of test time per file); a file not named keeps its place after them. Order only: nothing
is skipped or added here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.registry.presets import clear_cache
from tests.harness.task import use_extra_models


def _leave_out(plugins: str) -> None:
    """Every pytest a test starts from here on leaves out `plugins` ("-p no:NAME ...")."""
    addopts = os.environ.get("PYTEST_ADDOPTS", "")
    if plugins not in addopts:
        os.environ["PYTEST_ADDOPTS"] = f"{addopts} {plugins}".strip()


# The tests start several hundred pytest runs (the gates of fixture repositories, with ssw's own
# Python). In ssw's environment pytest autoloads anyio's plugin (httpx brings anyio, selenium
# brings trio, which that plugin imports): 0.15 s of each run's 0.35 s start, a sixth of the
# suite's time, for a plugin no test uses. Set before any test starts a process, so they all
# inherit it; the gates add their own options after it.
_leave_out("-p no:anyio")


# And pytest-xdist's two plugins, which no fixture repository's tests use either: about 10 ms of
# each of those runs (a forked stage of a one-test repository: 0.066 -> 0.056 CPU-s). Not in the
# process that starts the workers of `-n`: they read its environment, and need xdist.
def pytest_configure(config: pytest.Config) -> None:
    worker = hasattr(config, "workerinput")
    if worker or not config.getoption("numprocesses", None):
        _leave_out("-p no:xdist -p no:xdist.looponfail")


LONGEST_FIRST = (
    "tests/bench/test_grading_faults.py",  # 38 s
    "tests/test_llamacpp_integration.py",  # 36 s
    "tests/bench/test_validate.py",  # 30 s
    "tests/bench/test_cluster.py",  # 29 s
    "tests/gates/test_in_run.py",  # 23 s
    "tests/agent/test_every_end.py",  # 21 s
    "tests/bench/test_task_data.py",  # 19 s
    "tests/agent/test_machine.py",  # 18 s
    "tests/gates/test_startup_hostile.py",  # 17 s
    "tests/sim/test_bench_sim.py",  # 17 s
    "tests/gates/test_hostile_run.py",  # 15 s
    "tests/agent/test_continue.py",  # 14 s
    "tests/test_bad_input.py",  # 14 s
    "tests/gates/test_warm.py",  # 14 s
    "tests/agent/test_apply_force_and_bytes.py",  # 12 s
    "tests/claims/test_registration_log.py",  # 12 s
    "tests/bench/test_bench_signals.py",  # 12 s
    "tests/bench/test_harbor.py",  # 10 s
)
_RANK = {path: rank for rank, path in enumerate(LONGEST_FIRST)}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A stable sort: within a file, and among the files not named, the collected order stays.
    items.sort(key=lambda item: _RANK.get(item.nodeid.split("::", 1)[0], len(_RANK)))


@pytest.fixture(autouse=True)
def _own_price_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test its own price cache (ADR 0061): none reads or writes the user's, and none sees
    what another test's run read. The ssw processes a test starts inherit it."""
    monkeypatch.setenv("SSW_CACHE_DIR", str(tmp_path_factory.mktemp("ssw-cache")))


@pytest.fixture
def extra_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The registry in use has tests.harness.task.EXTRA_MODELS in its scripted preset."""
    yield use_extra_models(monkeypatch, tmp_path)
    clear_cache()
