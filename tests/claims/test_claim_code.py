"""Evidence names the code that computed and judged it (issue 44, claims/code.py): the sha256 of
each module a claim's metrics import (followed to the end) and of the judging modules. A change
to that code since the evidence was written fails `ssw prove --check`, naming the claim and the
module; `ssw prove` proves it again from the raw samples and says so beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepswitch.claims.code import JUDGES, closure, code_hashes
from tests.claims.conftest import copy_claims, ssw

COPIED = ("README.md", "claims/claims.yaml", "claims/registrations.yaml", "bench/perf/results.json")
EVIDENCE = "claims/evidence/C-005.json"
METRIC = "stepswitch/claims/metrics/perf_overhead.py"  # C-005: perf.overhead


@pytest.fixture
def real(tmp_path: Path) -> Path:
    return copy_claims(tmp_path / "real", COPIED)


def _stored_code(root: Path) -> dict[str, str]:
    return json.loads((root / EVIDENCE).read_text(encoding="utf-8"))["code"]


def test_the_evidence_names_the_metrics_module_and_the_judges(real: Path) -> None:
    code = _stored_code(real)
    assert METRIC in code and "stepswitch/claims/numbers.py" in code
    assert code == code_hashes(["stepswitch.claims.metrics.perf_overhead"])


def test_the_closure_follows_imports_to_the_end() -> None:
    found = closure(["stepswitch.claims.metrics.perf_overhead"])
    assert "stepswitch.claims.inputs" in found  # imported by the metric
    assert "stepswitch.util.hashing" in found  # imported by what it imports
    judged = code_hashes([])
    named = {"stepswitch/" + j.split(".", 1)[1].replace(".", "/") + ".py" for j in JUDGES}
    assert named == set(judged)


def test_code_changed_since_the_evidence_fails_the_check_naming_it(real: Path) -> None:
    code, out = ssw(real, "prove", "--check", "--claim", "C-005")
    assert "the code that computes or judges it changed" not in out  # the control
    evidence = json.loads((real / EVIDENCE).read_text(encoding="utf-8"))
    evidence["code"][METRIC] = "0" * 64  # as if written by other code than today's
    (real / EVIDENCE).write_text(json.dumps(evidence, indent=2, sort_keys=True) + "\n")

    lines = (real / EVIDENCE).read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if f'"{METRIC}"' in text)
    code, out = ssw(real, "prove", "--check", "--claim", "C-005")
    assert code != 0
    assert (
        f"problem: C-005: the code that computes or judges it changed since {EVIDENCE} was "
        f"written ({METRIC}; {EVIDENCE} line {line}): run ssw prove --claim C-005 (it proves it "
        "again from the raw samples)"
    ) in out.splitlines()

    code, out = ssw(real, "prove", "--claim", "C-005")
    [line] = [x for x in out.splitlines() if x.startswith("C-005")]
    assert line.endswith(f"(proved again by changed code: {METRIC})")
    assert _stored_code(real)[METRIC] != "0" * 64  # today's code, recorded
    code, out = ssw(real, "prove", "--check", "--claim", "C-005")
    assert "the code that computes or judges it changed" not in out
