"""Full runs for the step-machine tests: the sample repositories as fixtures, and a registry
with more scripted models. The scripted task itself (replies, policies, `run_ssw`) is the
harness's: tests/harness/task.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepswitch.errors import UsageError
from stepswitch.util.sandbox import choose_sandbox
from tests.harness.repo import sample_repo


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
