"""`ssw prove` renders the README from evidence, byte for byte the same each time, and
`ssw prove --check` catches every kind of tampering."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.claims.conftest import CLAIMS, commit_all, line_of, register_all, ssw

EVIDENCE = "claims/evidence/C-001.json"


def _files(root: Path) -> dict[str, bytes]:
    paths = [root / "README.md", *sorted((root / "claims/evidence").glob("*.json"))]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in paths}


def test_prove_renders_the_readme_numbers_from_the_evidence(repo: Path):
    text = (repo / "README.md").read_text()
    assert "<!-- claim C-001 ratio -->0.30<!-- /claim -->" in text
    assert (
        "**C-001 (accepted):** ssw 4.8 ms against 16.1 ms, a ratio of 0.30 over 40 steps." in text
    )
    assert "| C-002 | Impacted tests first are sooner | accepted |" in text
    evidence = json.loads((repo / EVIDENCE).read_text())
    assert evidence["verdict"] == "accepted"
    assert evidence["values"]["ratio"] == {"text": "0.30", "value": "0.298063345664"}
    assert [i["path"] for i in evidence["inputs"]] == ["bench/perf/results.json"]
    assert evidence["tool"]["name"] == "stepswitch"


def test_proving_again_changes_no_byte_and_check_passes(repo: Path):
    before = _files(repo)
    code, out = ssw(repo, "prove")
    assert code == 0, out
    assert "written:" not in out
    assert _files(repo) == before
    assert all(b"\r" not in data for data in before.values())
    code, out = ssw(repo, "prove", "--check")
    assert code == 0, out


def test_check_writes_nothing_and_fails_when_an_evidence_file_was_edited(repo: Path):
    path = repo / EVIDENCE
    path.write_text(path.read_text().replace('"text": "0.30"', '"text": "0.25"'))
    edited = path.read_bytes()
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert f"problem: {EVIDENCE} would change" in out
    assert path.read_bytes() == edited


def test_check_fails_when_a_result_file_changed_since_its_evidence(repo: Path):
    path = repo / "bench/perf/results.json"
    data = json.loads(path.read_text())
    data["steps"] = 41
    path.write_text(json.dumps(data))
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert "problem: C-001: bench/perf/results.json changed since claims/evidence/C-001.json" in out
    assert "problem: README.md would change" in out


def test_check_fails_on_a_readme_number_edited_inside_a_marker(repo: Path):
    path = repo / "README.md"
    path.write_text(path.read_text().replace("-->0.30<!--", "-->0.25<!--"))
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert "problem: README.md would change" in out
    code, _ = ssw(repo, "prove")  # proving puts the evidence's number back
    assert code == 0
    assert "-->0.30<!--" in path.read_text()


def test_check_fails_on_a_number_typed_outside_markers_in_a_claims_section(repo: Path):
    path = repo / "README.md"
    path.write_text(path.read_text().replace("See C-002 too.", "See C-002: 8.2x faster."))
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    line = path.read_text().splitlines().index("See C-002: 8.2x faster.") + 1
    assert f"problem: README.md:{line}: '8.2' in a claims section is not rendered" in out
    assert "2.4.6" not in out  # outside the claims section, nothing is linted


def test_a_claim_whose_bound_fails_is_rendered_rejected_not_hidden(make_repo):
    repo = make_repo(claims=CLAIMS.replace('"ratio <= 1/3"', '"ratio <= 1/4"'), expect=1)
    text = (repo / "README.md").read_text()
    assert "<!-- claim C-001 ratio -->0.30 (rejected: C-001)<!-- /claim -->" in text
    assert "**C-001 (rejected):**" in text
    assert "ratio <= 1/4 (FAILS)" in text
    # The index row says which bound failed, at what value and by how much (issue 44).
    row = "| C-001 | Overhead per step is at most a third of the peer's | rejected (ratio <= 1/4 "
    assert f"{row}fails: 0.30, 0.05 above its bound) |" in text
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert "C-001: its evidence gives rejected, claims.yaml says accepted" in out
    claims = repo / "claims/claims.yaml"
    claims.write_text(claims.read_text().replace("status: accepted", "status: rejected", 1))
    code, out = ssw(repo, "prove")
    assert code == 0, out
    assert "**C-001 (rejected):**" in (repo / "README.md").read_text()


def test_a_registered_claim_without_evidence_shows_no_number(make_repo):
    claims = CLAIMS.replace("    evidence: {results: bench/perf/results.json}\n", "").replace(
        "status: accepted", "status: registered", 1
    )
    repo = make_repo(claims=claims)
    text = (repo / "README.md").read_text()
    assert "<!-- claim C-001 ratio -->registered, not yet proved<!-- /claim -->" in text
    assert "**C-001 (registered, not yet proved):** Overhead per step" in text
    assert "0.30" not in text
    evidence = json.loads((repo / EVIDENCE).read_text())
    assert (evidence["verdict"], evidence["values"], evidence["why"]) == (
        "not_proved",
        {},
        ["no evidence yet"],
    )


WITHDRAWN = (
    "    status: withdrawn\n    reason: measured without the sandbox\n"
    "    adr: docs/decisions/0099-x.md\n"
)


def _withdraw(repo: Path, status: str, record: str) -> None:
    """`record` committed as docs/decisions/0099-x.md, then C-001 withdrawn by it in claims.yaml
    (its `status` line replaced)."""
    (repo / "docs/decisions").mkdir(parents=True)
    (repo / "docs/decisions/0099-x.md").write_text(record)
    commit_all(repo, "the record")
    claims = repo / "claims/claims.yaml"
    claims.write_text(claims.read_text().replace(f"    status: {status}\n", WITHDRAWN, 1))


def _rejected_then_recorded(make_repo, record: str):
    """C-001 rejected by its evidence (a bound of a quarter) and committed; then `record`, a
    decision record, committed after it, withdrawing C-001; the repository."""
    rejecting = CLAIMS.replace('"ratio <= 1/3"', '"ratio <= 1/4"').replace(
        "    status: accepted\n", "    status: rejected\n", 1
    )
    repo = make_repo(claims=rejecting)
    commit_all(repo, "C-001 rejected by its evidence")
    _withdraw(repo, "rejected", record)
    return repo


def test_a_withdrawn_claim_stays_in_the_readme_with_its_reason_and_record(make_repo):
    repo = _rejected_then_recorded(make_repo, "# 0099: C-001 is withdrawn: no sandbox\n")
    code, out = ssw(repo, "prove")
    assert code == 0, out
    text = (repo / "README.md").read_text()
    assert (
        "**C-001 (withdrawn: measured without the sandbox; docs/decisions/0099-x.md):** "
        "Overhead per step is at most a third of the peer's." in text
    )
    assert "<!-- claim C-001 ratio -->withdrawn<!-- /claim -->" in text
    assert "| C-001 | Overhead per step is at most a third of the peer's | withdrawn:" in text


def test_a_withdrawal_by_a_record_that_does_not_name_the_claim_is_refused(make_repo):
    repo = _rejected_then_recorded(make_repo, "# 0099: something else\n")
    code, out = ssw(repo, "prove")
    assert code == 1
    at = f"claims/claims.yaml line {line_of(repo, 'claims/claims.yaml', 'adr: docs/')}"
    assert (
        f"problem: C-001: withdrawn by docs/decisions/0099-x.md ({at}), which does not name "
        "C-001: the record that withdraws a claim says which claim and why"
    ) in out.splitlines()


def test_a_claim_never_rejected_cannot_be_withdrawn(make_repo):
    # Withdrawal is not a way to drop an accepted claim that a re-measurement might fail.
    repo = make_repo()
    _withdraw(repo, "accepted", "# 0099: C-001 is withdrawn\n")
    code, out = ssw(repo, "prove")
    assert code == 1
    at = f"claims/claims.yaml line {line_of(repo, 'claims/claims.yaml', 'adr: docs/')}"
    assert (
        f"problem: C-001: withdrawn ({at}), but no committed claims/evidence/C-001.json ever "
        "rejected it: a claim is withdrawn after its evidence rejects it, never instead"
    ) in out.splitlines()


def test_deleting_a_proved_claim_fails_the_check(repo: Path):
    claims = repo / "claims/claims.yaml"
    claims.write_text(claims.read_text().split("  - id: C-002")[0])
    readme = repo / "README.md"
    readme.write_text(re.sub(r"- <!-- claim C-002 -->.*?<!-- /claim -->", "", readme.read_text()))
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert "claims/evidence/C-002.json has no claim in claims.yaml" in out
    assert "claims/registrations.yaml: C-002 is registered but is no claim" in out


def test_a_claim_the_readme_does_not_show_fails(make_repo):
    readme = "# Demo\n\n<!-- claim C-001 ratio --><!-- /claim -->\n"
    repo = make_repo(prove=False, readme=readme)
    code, out = ssw(repo, "prove")
    assert code == 1
    assert "problem: C-002 is not shown in README.md" in out


def test_proving_one_claim_renders_the_others_from_their_files(repo: Path):
    path = repo / "claims/evidence/C-002.json"
    before = path.read_bytes()
    code, out = ssw(repo, "prove", "--claim", "C-001")
    assert code == 0, out
    assert out.splitlines()[0].startswith("C-001  accepted")
    assert path.read_bytes() == before
    path.unlink()
    code, out = ssw(repo, "prove", "--claim", "C-001", "--check")
    assert code == 1
    assert "C-002: claims/evidence/C-002.json does not exist" in out


def test_a_claim_changed_after_its_registration_is_refused(repo: Path):
    claims = repo / "claims/claims.yaml"
    claims.write_text(claims.read_text().replace("a ratio of {ratio}", "only {ratio}"))
    code, out = ssw(repo, "prove")
    assert code == 1
    assert "C-001: evidence refused: its text changed since it was registered" in out
    # claims.yaml says accepted: the README says so beside the refusal, not "registered"
    shown = "not proved, though claims.yaml says accepted"
    assert f"<!-- claim C-001 ratio -->{shown}<!-- /claim -->" in (repo / "README.md").read_text()
    commit_all(repo)
    register_all(repo)
    code, out = ssw(repo, "prove")
    assert code == 0, out


def test_an_evidence_file_that_is_no_longer_json_fails_the_check_and_proving_rewrites_it(repo):
    path = repo / EVIDENCE
    proved = path.read_bytes()
    path.write_text("{ not json")
    code, out = ssw(repo, "prove", "--check")
    assert code == 1
    assert f"problem: {EVIDENCE} would change" in out
    assert ssw(repo, "prove")[0] == 0
    assert path.read_bytes() == proved
