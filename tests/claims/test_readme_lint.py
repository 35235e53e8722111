"""The whole README, and every page of the docs site, is linted by `ssw prove --check` (a decision
record outside its measured notes too, ADR 0077), and a page's claim markers are rendered and
checked as the README's (ADR 0066): each way of laundering a number is a tamper test on a copy of
this repository's README, pages and claims, and a finding names the file, the line and the
text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.claims.conftest import REPO, copy_claims, lint_findings, ssw

ADR = "docs/decisions/0016-claims-engine.md"
PAGE = "docs/claims.md"  # every claim in full
# C-005 is re-proved (from bench/perf alone); every other claim renders from its evidence file.
COPIED = ("README.md", "claims/claims.yaml", "claims/registrations.yaml", "bench/perf/results.json")


@pytest.fixture
def real(tmp_path: Path) -> Path:
    """A copy of the repository's README, claims, evidence and docs pages (and one record)."""
    pages = [p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")]
    return copy_claims(tmp_path / "real", (*COPIED, *pages, ADR))


def check(root: Path) -> tuple[int, list[str]]:
    code, out = ssw(root, "prove", "--check", "--claim", "C-005")
    # C-002's evidence is being re-made elsewhere; nothing here depends on it.
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    return code, [p for p in problems if "C-002" not in p]


def edit(path: Path, old: str, new: str) -> int:
    """Replace `old` (once) by `new`, and return the line of `new`'s last line."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return text.count("\n", 0, text.index(old)) + new.rstrip("\n").count("\n") + 1


def test_the_real_readme_and_the_docs_pages_pass(real: Path) -> None:
    _, problems = check(real)
    assert problems == []


def test_a_number_typed_in_quick_start_fails(real: Path) -> None:
    line = edit(
        real / "README.md",
        "## Quick start\n",
        "## Quick start\n\nStepswitch is 3.1x faster than aider and saves 40% of the bill.\n",
    )
    code, problems = check(real)
    assert code == 1
    shown = "'Stepswitch is 3.1x faster than aider and saves 40% of the bill.'"
    assert any(p.startswith(f"problem: README.md:{line}: '3.1' ") and shown in p for p in problems)
    assert any(p.startswith(f"problem: README.md:{line}: '40' ") for p in problems)
    assert len(problems) == 2  # one finding per number, one per line


def test_a_comparison_spelled_out_inside_the_claims_section_fails(real: Path) -> None:
    line = edit(
        real / "README.md",
        "<!-- claims-section -->\n",
        "<!-- claims-section -->\nStepswitch is three times faster, and halves your bill.\n",
    )
    code, problems = check(real)
    assert code == 1
    assert [p.split(" is a figure")[0] for p in problems] == [
        f"problem: README.md:{line}: 'three times' in a claims section",
        f"problem: README.md:{line}: 'halves' in a claims section",
    ]


@pytest.mark.parametrize("words", ["twice as fast", "half the dollars", "a third of the cost"])
def test_a_comparison_spelled_out_outside_the_section_fails(real: Path, words: str) -> None:
    line = edit(real / "README.md", "## Documentation\n", f"## Documentation\n\nIt is {words}.\n")
    code, problems = check(real)
    assert code == 1
    assert len(problems) == 1 and problems[0].startswith(f"problem: README.md:{line}: '")


def test_a_number_typed_on_any_docs_page_or_outside_a_records_notes_fails(real: Path) -> None:
    line = edit(real / "docs/gates.md", "## Pre-flight\n", "## Pre-flight\n\nIt is 2.5x sooner.\n")
    (real / "docs/notes.md").write_text("# Notes\n\nLinked from nowhere: 7x faster.\n")
    (real / "docs/deep").mkdir()
    (real / "docs/deep/more.md").write_text("# More\n\nIt halves the bill.\n")
    record = real / ADR
    at = record.read_text().count("\n") + 1
    record.write_text(record.read_text() + "The ladder is 2.5x cheaper.\n")  # outside its notes
    code, problems = check(real)
    assert code == 1
    assert [p.split(" is")[0] for p in problems] == [
        f"problem: {ADR}:{at}: '2.5'",
        "problem: docs/deep/more.md:3: 'halves'",
        f"problem: docs/gates.md:{line}: '2.5'",
        "problem: docs/notes.md:3: '7'",
    ]
    assert "'It is 2.5x sooner.'" in problems[2]


def test_a_number_typed_in_a_claims_section_of_a_page_fails(real: Path) -> None:
    page = real / PAGE
    line = edit(page, "## Every claim\n", "## Every claim\n\nThe oracle passed 185 tasks.\n")
    code, problems = check(real)
    assert code == 1
    assert [p.split(" is not")[0] for p in problems] == [
        f"problem: {PAGE}:{line}: '185' in a claims section"
    ]


def test_a_digit_changed_inside_a_marker_names_the_claim_and_the_line(real: Path) -> None:
    """A stale marker on the Claims page fails `ssw prove --check` as one in the README does."""
    page = real / PAGE
    text = page.read_text(encoding="utf-8")
    marker = re.search(r"<!-- claim C-005 -->.*?a ratio of (\d)", text)
    assert marker is not None
    digit = marker.group(1)
    other = "1" if digit != "1" else "2"
    at = marker.start(1)
    page.write_text(text[:at] + other + text[at + 1 :], encoding="utf-8")
    line = text.count("\n", 0, at) + 1
    code, problems = check(real)
    assert code == 1
    (problem,) = problems
    assert problem.startswith(f"problem: {PAGE} would change at line {line} (claim C-005): ")
    assert f"a ratio of {other}" in problem and f"a ratio of {digit}" in problem


def test_a_state_changed_in_the_claims_index_names_the_claim_and_its_row(real: Path) -> None:
    readme = real / "README.md"
    text = readme.read_text(encoding="utf-8")
    row = re.search(r"^\| (C-\d+) \|.*\| rejected[;| ]", text, re.M)  # any rejected claim
    assert row is not None
    line = text.count("\n", 0, row.start()) + 1
    readme.write_text(text.replace(row.group(0), row.group(0).replace("| rejected", "| accepted")))
    code, problems = check(real)
    assert code == 1
    assert problems == [
        p for p in problems if p.startswith(f"problem: README.md would change at line {line} ")
    ]
    assert f"(claim {row.group(1)} in the claims index)" in problems[0]


def test_rules_exempt_labels_but_never_a_quantity() -> None:
    fine = (
        "On Python 3.11+ with mini-swe-agent 2.4.6, measured on 2026-12-01 (ADR 0016, issue 23,\n"
        "`docs/decisions/0016-claims-engine.md`): exit code 2, and 130 when interrupted; HTTP 429\n"
        "and 5xx are retried, `--workers 2` on 127.0.0.1, `sha256`, gpt-5-mini, after kill -9.\n"
        "It fails the gates twice. See [x](https://example.com/1.5x).\n\n"
        "```\nssw bench run --runs-per-task 3   # a code sample\n```\n"
    )
    assert lint_findings(fine) == []
    bad = (
        "It exits 2 s sooner, answers 429 ms later and saves $500; ADR 0016 is 3 times shorter,\n"
        "version 2 is 2.5x faster, and issue 12 halved the bill.\n\n"
        "```\nssw bench run --runs-per-task 3   # 3.1x faster, says a comment\n```\n"
    )
    assert lint_findings(bad) == ["2", "429", "500", "3", "2.5", "halved", "3.1"]
