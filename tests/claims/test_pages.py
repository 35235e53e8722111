"""The docs site's pages (ADR 0066): `ssw prove` renders a page's claim markers as the README's,
`ssw prove --check` fails on a page that proving would change, and a decision record is not
rendered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.claims.conftest import commit_all, ssw

PAGE = """\
# Results

The overhead ratio is <!-- claim C-001 ratio --><!-- /claim -->.

<!-- claims-section -->
- <!-- claim C-002 --><!-- /claim -->
<!-- /claims-section -->
"""


def _with_page(make_repo: Callable[..., Path], rel: str = "docs/results.md") -> Path:
    root = make_repo(prove=False)
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(PAGE)
    commit_all(root, "a page")
    code, out = ssw(root, "prove")
    assert code == 0, out
    assert f"written: {rel}" in out
    return root


def test_a_page_marker_is_rendered_and_links_its_evidence_from_the_page(
    make_repo: Callable[..., Path],
) -> None:
    root = _with_page(make_repo, "docs/deep/results.md")
    text = (root / "docs/deep/results.md").read_text()
    assert "The overhead ratio is <!-- claim C-001 ratio -->0.30<!-- /claim -->." in text
    assert "- <!-- claim C-002 -->**C-002 (accepted):**" in text
    assert "[evidence](../../claims/evidence/C-002.json)<!-- /claim -->" in text
    code, out = ssw(root, "prove", "--check")
    assert code == 0, out


def test_a_stale_marker_on_a_page_fails_the_check(make_repo: Callable[..., Path]) -> None:
    root = _with_page(make_repo)
    page = root / "docs/results.md"
    page.write_text(page.read_text().replace("-->0.30<", "-->0.25<"))
    code, out = ssw(root, "prove", "--check")
    assert code == 1
    assert (
        "problem: docs/results.md would change at line 3 (claim C-001 ratio): it shows "
        "'0.25', the evidence gives '0.30': run ssw prove and commit the result"
    ) in out.splitlines()


def test_a_number_typed_on_a_page_fails_the_check(make_repo: Callable[..., Path]) -> None:
    root = _with_page(make_repo)
    (root / "docs/other.md").write_text("# Other\n\nNo marker here, and ssw is 3x faster.\n")
    code, out = ssw(root, "prove", "--check")
    assert code == 1
    problems = [line for line in out.splitlines() if line.startswith("problem:")]
    assert [p.split(" is not")[0] for p in problems] == ["problem: docs/other.md:3: '3'"]


def test_a_page_marker_naming_no_claim_is_exit_2_naming_the_page(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo()
    (root / "docs").mkdir()
    (root / "docs/results.md").write_text("# Results\n\n<!-- claim C-999 --><!-- /claim -->\n")
    code, out = ssw(root, "prove", "--check")
    assert code == 2
    assert out.startswith(
        "ssw: docs/results.md: line 3: marker names C-999, which is no claim in claims.yaml"
    )


def test_a_decision_record_is_not_rendered(make_repo: Callable[..., Path]) -> None:
    """Its markers are examples; its figures are history only in a measured note (ADR 0077,
    tests/claims/test_shipped_lint.py)."""
    root = make_repo()
    record = root / "docs/decisions/0001-markers.md"
    record.parent.mkdir(parents=True)
    text = "# 0001\n\nMarkers read `<!-- claim ID -->...<!-- /claim -->`.\n"
    record.write_text(text)
    code, out = ssw(root, "prove", "--check")
    assert code == 0, out
    assert record.read_text() == text
