"""A hidden run graded by named tests (a task's `fail_to_pass` and `pass_to_pass`, as SWE-bench
grades): a small pytest plugin, written beside each such run with the ids in a file and loaded
with `-p ssw_grading_select`, keeps only the tests of those ids (the others in the same files are
deselected, so they neither run nor count); `with_missing` then counts each id the JUnit report
does not name as a failure, named `<id> (not collected)`. A skipped id is a skip, and a skip
fails the verdict (verdict.TestVerdict.passed)."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from stepswitch.bench.pytest_ids import junit_name
from stepswitch.bench.task import MAX_FAILING
from stepswitch.bench.verdict import TestVerdict

SELECT_PLUGIN = "ssw_grading_select"
IDS_FILE = "ssw-graded-ids.txt"
NOT_COLLECTED = "not collected"

SELECT_SOURCE = '''"""Keeps only the tests whose ids --ssw-select's file lists (by stepswitch)."""


def pytest_addoption(parser):
    parser.addoption("--ssw-select", default="")


def pytest_collection_modifyitems(config, items):
    path = config.getoption("--ssw-select")
    if not path:
        return
    with open(path, encoding="utf-8") as f:
        wanted = set(f.read().splitlines())
    kept = [item for item in items if item.nodeid in wanted]
    dropped = [item for item in items if item.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
'''


def select_args(plugin_dir: Path, ids: Sequence[str]) -> list[str]:
    """Write the plugin and the ids into `plugin_dir` (on the run's PYTHONPATH, read-only in its
    sandbox); the arguments that load it."""
    (plugin_dir / f"{SELECT_PLUGIN}.py").write_text(SELECT_SOURCE, encoding="utf-8")
    listed = plugin_dir / IDS_FILE
    listed.write_text("".join(f"{node}\n" for node in ids), encoding="utf-8")
    return ["-p", SELECT_PLUGIN, f"--ssw-select={listed}"]


def _reported(report: bytes) -> set[str]:
    """The tests a JUnit report names, as `classname::name` (pytest_ids.junit_name's form)."""
    root = ET.fromstring(report)
    return {f"{c.get('classname', '')}::{c.get('name', '')}" for c in root.iter("testcase")}


def with_missing(verdict: TestVerdict, report: bytes, ids: Sequence[str]) -> TestVerdict:
    """`verdict` with every id its report does not name counted as a failed test, named first
    among the failing; a verdict without a report pytest wrote is left as it is."""
    if not verdict.report or verdict.tampered is not None:
        return verdict
    seen = _reported(report)
    missing = [f"{node} ({NOT_COLLECTED})" for node in ids if junit_name(node) not in seen]
    if not missing:
        return verdict
    return dataclasses.replace(
        verdict,
        tests=verdict.tests + len(missing),
        failures=verdict.failures + len(missing),
        failing=(*missing, *verdict.failing)[:MAX_FAILING],
    )
