"""Issue 23, route 2: raw data edited and re-proved. A figure stored as a median, a ratio or a
per-step cost is recomputed from the raw samples the evidence keeps, so a summary edited by hand
and proved again still fails `ssw prove --check`, naming the claim and the file; a figure with no
samples cannot prove a claim (docs/decisions/0026-evidence-raw-and-relative.md).

Each test tampers with a copy of committed evidence in a temp repository and runs the real CLI
(`python -m stepswitch prove`, then `prove --check`); the control is the same copy untouched."""

from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.claims.conftest import (
    CLAIMS_HEAD,
    OVERHEAD_CLAIM,
    SPEEDUP_CLAIM,
    commit_all,
    copy_fixture,
    measured_code,
    register_all,
)
from tests.harness.cli import run_ssw_cli

README = """\
# Demo

<!-- claims-section -->
{claims}
<!-- claims-index --><!-- /claims-index -->
<!-- /claims-section -->
"""


# A machine's checkout as the committed files name it (`cd <checkout> && `, `<checkout>/.venv`,
# `<checkout>/bench/...`): taken out, so a copy holds paths relative to the repository.
_CD = re.compile(r"cd [^\s\"]+ && ")
_CHECKOUT = re.compile(r"(?<=[\s\"'])/[^\s\"']*?/(?=bench/|\.venv/)")


def portable(text: str) -> str:
    return _CHECKOUT.sub("", _CD.sub("", text))


def copy(root: Path, rel: str, source: str | None = None) -> Path:
    """REPO's `source` (default `rel`) at root/rel, its machine paths taken out and the ssw
    commit it names one of root's (tests/claims/conftest.py copy_fixture)."""
    if not (root / ".git").exists():
        measured_code(root)
    path = copy_fixture(root, rel, source or rel)
    path.write_text(portable(path.read_text(encoding="utf-8")))
    return path


def make(root: Path, claims: str, ids: list[str]) -> Path:
    """claims.yaml and a README showing `ids`, committed and registered."""
    (root / "claims").mkdir(parents=True, exist_ok=True)
    (root / "claims/claims.yaml").write_text(CLAIMS_HEAD + claims, encoding="utf-8")
    shown = "\n".join(f"- <!-- claim {i} --><!-- /claim -->" for i in ids)
    (root / "README.md").write_text(README.format(claims=shown), encoding="utf-8")
    if not (root / ".git").exists():
        measured_code(root)
    commit_all(root, "start")
    register_all(root)
    return root


def ssw_prove(root: Path, *args: str) -> tuple[int, str]:
    """The real CLI in a process of its own: exit code and output."""
    done = run_ssw_cli(["prove", *args, "--root", str(root)], timeout=300)
    return done.returncode, done.stdout + done.stderr


def reprove_and_check(root: Path) -> tuple[int, str]:
    """What laundering does: re-prove (write the evidence) whatever it says, then the CI check."""
    ssw_prove(root)
    return ssw_prove(root, "--check")


def refused(root: Path, change: Any = None) -> str:
    """What the check says after re-proving the copy with `change` made to its perf results
    (None: a test edited the evidence itself), once it failed."""
    if change is not None:
        edit_json(root / PERF, change)
    code, out = reprove_and_check(root)
    assert code == 1, out
    return out


def edit_json(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


# --- the copies ---------------------------------------------------------------------------------

PERF = "bench/perf/results.json"
PERF_CLAIMS = """\
  - id: C-001
    title: ssw help starts cold quickly
    statement: >-
      ssw help takes {ssw_help_ms} ms (median of {help_reps}, {ssw_help_ms_min} to
      {ssw_help_ms_max}); mini help {mini_help_ms} ms.
    metrics: [perf.cold_start]
    evidence: {results: bench/perf/results.json}
    bounds: ["ssw_help_ms < 200"]
    bounds_set_by: the perf issue
    retrospective: the bound was set before the measurement
    status: accepted
"""
PERF_CLAIMS += OVERHEAD_CLAIM.replace("id: C-001", "id: C-002")
GATES_CLAIMS = SPEEDUP_CLAIM.replace("id: C-002", "id: C-003")


def with_samples(data: dict[str, Any]) -> None:
    """The pinned 2026-11-29 results keep only a summary of the cold start: for these copies (never
    for committed evidence) samples that give exactly that summary."""
    for key in ("ssw_help_s", "mini_help_s"):
        s = data["cold_start"][key]
        s["samples"] = [s["min"], *[s["median"]] * (int(s["n"]) - 2), s["max"]]


@pytest.fixture
def perf_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    edit_json(copy(root, PERF, "tests/fixtures/claims/perf-results.json"), with_samples)
    copy(root, "bench/gates/summary.json", "tests/fixtures/claims/gates-summary.json")
    copy(root, "bench/gates/results.csv", "tests/fixtures/claims/gates-results.csv")
    make(root, PERF_CLAIMS + GATES_CLAIMS, ["C-001", "C-002", "C-003"])
    code, out = ssw_prove(root)
    assert code == 0, out
    return root


# --- the control --------------------------------------------------------------------------------


def test_the_untampered_copy_with_its_samples_passes_the_check(perf_repo: Path) -> None:
    code, out = ssw_prove(perf_repo, "--check")
    assert code == 0, out
    assert "3 claims: evidence and README as proving makes them" in out


# --- the tampers --------------------------------------------------------------------------------


def test_a_median_edited_below_its_own_minimum_and_re_proved_fails_the_check(
    perf_repo: Path,
) -> None:
    def below_min(data: dict[str, Any]) -> None:
        data["cold_start"]["ssw_help_s"]["median"] = 0.1000

    out = refused(perf_repo, below_min)
    assert (
        "problem: C-001: the evidence cannot prove it: bench/perf/results.json: "
        "cold_start.ssw_help_s.median is 0.1, but its samples give 0.135" in out
    ), out


def test_a_figure_with_no_raw_samples_cannot_prove_its_claim(perf_repo: Path) -> None:
    def summary_only(data: dict[str, Any]) -> None:
        del data["cold_start"]["ssw_help_s"]["samples"]

    out = refused(perf_repo, summary_only)
    assert (
        "problem: C-001: the evidence cannot prove it: bench/perf/results.json: "
        "cold_start.ssw_help_s has no raw samples" in out
    ), out


def test_a_stored_ratio_that_is_not_the_repetitions_fails_the_check(perf_repo: Path) -> None:
    def ratio(data: dict[str, Any]) -> None:
        data["overhead"]["ratio_of_medians"] = 0.2

    out = refused(perf_repo, ratio)
    assert (
        "problem: C-002: the evidence cannot prove it: bench/perf/results.json: "
        "overhead.ratio_of_medians is 0.2, but the repetitions give" in out
    ), out


def test_a_repetition_and_its_summary_edited_together_fail_on_its_timed_parts(
    perf_repo: Path,
) -> None:
    def launder(data: dict[str, Any]) -> None:
        """Every stored figure made consistent with a repetition's edited overhead, all but the
        timed parts it is worked out from."""
        o = data["overhead"]
        for run in o["ssw_runs"]:
            run["overhead_per_step_ms"] = 1.0
        for stat in ("median", "min", "max"):
            o["ssw_overhead_per_step_ms"][stat] = 1.0
        pairs = [1.0 / m["overhead_per_step_ms"] for m in o["mini_runs"]]
        o["ratio_per_pair"].update(median=statistics.median(pairs), min=min(pairs), max=max(pairs))
        o["ratio_of_medians"] = 1.0 / o["mini_overhead_per_step_ms"]["median"]

    out = refused(perf_repo, launder)
    assert (
        "problem: C-002: the evidence cannot prove it: bench/perf/results.json: "
        "overhead.ssw_runs[0]: overhead_per_step_ms is 1, but its timed parts give" in out
    ), out


def test_a_row_ratio_its_times_do_not_give_fails_the_check(perf_repo: Path) -> None:
    path = perf_repo / "bench/gates/results.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    rows[0]["ratio"] = "30.0"
    with path.open("w", encoding="utf-8", newline="") as out_csv:
        writer = csv.DictWriter(out_csv, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    out = refused(perf_repo)
    assert (
        "problem: C-003: the evidence cannot prove it: bench/gates/results.csv:2: ratio is 30, "
        "but full_first_verdict_s / impacted_first_verdict_s give" in out
    ), out
