"""Full runs for the step-machine tests: the sample repositories as fixtures, and a registry
with more scripted models. The scripted task itself (replies, policies, `run_ssw`) is the
harness's: tests/harness/task.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.registry.presets import clear_cache
from stepswitch.util.sandbox import choose_sandbox
from tests.harness.repo import sample_repo
from tests.harness.task import use_extra_models


def _sandbox_works() -> bool:
    try:
        choose_sandbox("auto")
    except UsageError:
        return False
    return True


# For a test of what a run's sandbox keeps in: skipped where no backend works.
NEEDS_A_SANDBOX = pytest.mark.skipif(
    not _sandbox_works(), reason="no sandbox backend works on this machine"
)


@pytest.fixture
def bug_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return sample_repo(tmp_path / "repo", "mean_bug")


@pytest.fixture
def feature_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return sample_repo(tmp_path / "repo", "median_feature")


@pytest.fixture
def extra_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield use_extra_models(monkeypatch, tmp_path)
    clear_cache()
