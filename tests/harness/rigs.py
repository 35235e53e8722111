"""What a hostile change plants in a repository's tests, for the tests of the gates and grading
that must not be fooled by it (each with a control where it does fool plain pytest)."""

from __future__ import annotations

# A pytest plugin (a conftest.py, or a module named by `-p`) that reports every test as passed,
# failing or not.
PASS_ALL = """
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
"""
