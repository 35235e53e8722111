"""A check that already fails before any edit is judged by the findings the change adds:
moving an old finding (its line changes) keeps the gate passing, a new one fails it, named."""

from __future__ import annotations

import os
from pathlib import Path

from stepswitch.gates.config import CommandGate, GateConfig
from stepswitch.gates.findings import KnownFindings, findings
from stepswitch.gates.preflight import preflight_gates
from stepswitch.gates.suite import GateSuite
from tests.harness.repo import write_repo

# A linter in one line: every line holding BAD is a finding, `path:line:col: X1 bad word`.
LINT = (
    "grep -rn --include='*.py' BAD . "
    "| sed -E 's/^\\.\\/([^:]*):([0-9]+):.*/\\1:\\2:1: X1 bad word/'; "
    "! grep -rq --include='*.py' BAD ."
)


def test_findings_are_read_without_their_line_numbers() -> None:
    out = (
        "src/a.py:12:5: F401 `os` imported but unused\n"
        "src/b.py:3: error: Incompatible return value  [return-value]\n"
        "Would reformat: src/c.py\n"
        "src/d.ts(1,53): error TS2322: Type 'string' is not assignable to type 'number'.\n"
        "Found 2 errors.\n"
    )
    assert sorted(findings(out)) == [
        "src/a.py: F401 `os` imported but unused",
        "src/b.py: error: Incompatible return value  [return-value]",
        "src/c.py: would be reformatted",
        "src/d.ts: error TS2322: Type 'string' is not assignable to type 'number'.",
    ]
    known = KnownFindings("lint", findings("a.py:1:1: X1 bad word\n"))
    assert known.judge("a.py:40:1: X1 bad word\n") == (True, [])
    assert known.judge("a.py:1:1: X1 bad word\nb.py:2:1: X1 bad word\n") == (
        False,
        ["b.py: X1 bad word"],
    )
    assert known.judge("something broke\n") == (False, [])  # unreadable: never a pass


def _suite(tmp_path: Path) -> tuple[GateSuite, Path]:
    root = write_repo(tmp_path, {"a.py": "x = 1  # BAD\n", "b.py": "y = 2\n"}, commit=True)
    gate = CommandGate(name="lint", command=LINT, timeout_s=60.0)
    suite = GateSuite(GateConfig((gate,), "test"), root, dict(os.environ))
    baseline = preflight_gates(suite, "HEAD")
    assert baseline.lines()[-1] == (
        "gates: lint already fails before any edit (1 finding(s)), so the change is judged by "
        "the findings it adds"
    )
    return suite, root


def test_a_change_that_adds_no_finding_passes_a_gate_that_failed_before(tmp_path: Path) -> None:
    suite, root = _suite(tmp_path)
    (root / "a.py").write_text("z = 0\n\nx = 1  # BAD\n")  # the old finding, two lines down

    result = suite.run(["a.py"])

    assert result.passed, result.report
    assert "the change adds none" in result.results[0].report


def test_a_change_that_adds_a_finding_fails_naming_only_what_it_adds(tmp_path: Path) -> None:
    suite, root = _suite(tmp_path)
    (root / "b.py").write_text("y = 2  # BAD\n")

    result = suite.run(["b.py"])

    assert not result.passed
    report = result.results[0].report
    assert "the change adds 1 finding(s)" in report and "b.py: X1 bad word" in report
    assert "a.py: X1" not in report
