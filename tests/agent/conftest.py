"""Full runs for the step-machine tests: the sample repositories as fixtures, and a registry
with more scripted models. The scripted task itself (replies, policies, `run_ssw`) is the
harness's: tests/harness/task.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.registry.presets import clear_cache
from tests.harness.repo import sample_repo
from tests.harness.task import use_extra_models


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
