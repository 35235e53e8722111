"""A pytest plugin the tests gate loads into the project's own pytest (`-p ssw_select` in
PYTEST_ADDOPTS, this folder on PYTHONPATH). It imports nothing of Stepswitch: it runs under the
project's interpreter.

SSW_SELECT names a JSON file: {"files": [absolute paths, in the order to run] or null,
"durations": absolute path to write seconds per test file to, or null}.
- With a list, every other test module is left out of collection (pytest_ignore_collect), so
  the project's collection, conftest files and hooks all still apply to the selected ones.
- The collected items are ordered by that list, each file's own order kept.
- Without a list, "order" (same form) only orders the items: the full suite, most likely
  failures first.
- With "durations", the time of each test file's tests is written there when the session ends.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

_spec: dict[str, Any] = {}
_rank: dict[str, int] = {}
_times: dict[str, float] = {}


def pytest_configure(config: pytest.Config) -> None:
    name = os.environ.get("SSW_SELECT")
    if not name:
        return
    _spec.update(json.loads(Path(name).read_text(encoding="utf-8")))
    files = _spec.get("files")
    if files is not None:
        _rank.update({str(Path(f)): i for i, f in enumerate(files)})


@pytest.hookimpl(tryfirst=True)
def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if _spec.get("files") is None or collection_path.is_dir():
        return None
    if collection_path.name in ("conftest.py", "__init__.py"):
        return None
    return True if str(collection_path) not in _rank else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if not _rank and _spec.get("order") is None:
        return
    rank = _rank or {str(Path(f)): i for i, f in enumerate(_spec.get("order") or [])}
    last = len(rank)
    items.sort(key=lambda item: rank.get(str(item.path), last))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _spec.get("durations"):
        path = report.nodeid.split("::", 1)[0]  # relative to pytest's rootdir
        _times[path] = _times.get(path, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = _spec.get("durations")
    if out and _times:
        root = str(session.config.rootpath)
        data = {"rootdir": root, "seconds": {k: round(v, 4) for k, v in _times.items()}}
        Path(out).write_text(json.dumps(data), encoding="utf-8")
