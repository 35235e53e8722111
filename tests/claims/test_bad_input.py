"""Malformed claims, registrations and README markers: one line naming the claim and the key,
exit 2, and nothing written."""

from __future__ import annotations

import pytest

from tests.claims.conftest import CLAIMS, README, ssw

BAD_CLAIMS = [
    (
        CLAIMS.replace("[perf.overhead]", "[perf.overheat]"),
        "claims/claims.yaml: C-001.metrics[0]: unknown metric 'perf.overheat'",
    ),
    (
        CLAIMS.replace("bench/perf/results.json", "bench/perf/missing.json"),
        "claims/claims.yaml: C-001.evidence.results: bench/perf/missing.json does not exist",
    ),
    (
        CLAIMS.replace('"ratio <= 1/3"', '"ratio =< 1/3"'),
        "claims/claims.yaml: C-001.bounds[0]: 'ratio =< 1/3' is not VALUE OP NUMBER",
    ),
    (
        CLAIMS.replace('"ratio <= 1/3"', '"ratios <= 1/3"'),
        "claims/claims.yaml: C-001.bounds[0]: no metric of C-001 gives 'ratios'",
    ),
    (
        CLAIMS.replace("id: C-002", "id: C-001"),
        "claims/claims.yaml: C-001.id: C-001 is the id of two",
    ),
    (
        CLAIMS.replace("    status: accepted\n", "    status: accepted\n    owner: me\n", 1),
        "claims/claims.yaml: C-001.owner: Extra inputs are not permitted",
    ),
    (
        CLAIMS.replace("    status: accepted\n", "    status: accepted\n    status: rejected\n", 1),
        "claims/claims.yaml: line",
    ),
    (
        CLAIMS.replace("a ratio of {ratio}", "a ratio of 0.30"),
        "claims/claims.yaml: C-001.statement: '0.30' is typed, not computed",
    ),
    (
        CLAIMS.replace("a ratio of {ratio}", "a ratio of {ration}"),
        "claims/claims.yaml: C-001.statement: {ration} names no value of C-001's metrics",
    ),
    (
        CLAIMS.replace("{results: bench/perf/results.json}", "{data: bench/perf/results.json}"),
        "claims/claims.yaml: C-001.evidence: perf.overhead reads 'results'",
    ),
    (
        CLAIMS.replace("status: accepted", "status: withdrawn", 1),
        "claims/claims.yaml: C-001.status: a withdrawn claim needs a reason and an adr",
    ),
    (
        CLAIMS.replace("status: accepted", "status: proved", 1),
        "claims/claims.yaml: C-001.status: Input should be",
    ),
]


@pytest.mark.parametrize(("claims", "message"), BAD_CLAIMS)
def test_a_malformed_claim_is_one_line_naming_the_claim_and_key_and_exit_2(
    make_repo, claims, message
):
    repo = make_repo(prove=False)
    (repo / "claims/claims.yaml").write_text(claims)
    for args in (("prove",), ("prove", "--check")):
        code, out = ssw(repo, *args)
        assert code == 2, out
        assert out.startswith(f"ssw: {message}"), out
        assert len(out.strip().splitlines()) == 1
    assert not (repo / "claims/evidence").exists()


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("<!-- claim C-099 --><!-- /claim -->", "marker names C-099, which is no claim"),
        ("<!-- claim C-001 speed --><!-- /claim -->", "C-001 has no value 'speed'"),
        ("<!-- claim C-001 ratio -->0.30", "<!-- claim is not closed"),
    ],
)
def test_a_readme_marker_naming_an_unknown_claim_or_value_is_exit_2(make_repo, marker, message):
    repo = make_repo(prove=False, readme=README + f"\nAlso {marker}\n")
    code, out = ssw(repo, "prove")
    assert code == 2
    line = len(README.splitlines()) + 2
    assert out.startswith(f"ssw: README.md: line {line}: {message}"), out
    assert not (repo / "claims/evidence").exists()


def test_a_malformed_registration_is_exit_2(repo):
    path = repo / "claims/registrations.yaml"
    path.write_text(path.read_text().replace("date: '", "date: 'yesterday ", 1))
    code, out = ssw(repo, "prove", "--check")
    assert code == 2
    assert out.startswith("ssw: claims/registrations.yaml: line 6 (C-001).date:"), out


def test_an_unknown_claim_id_on_the_command_line_is_exit_2(repo):
    assert ssw(repo, "prove", "--claim", "C-404")[0] == 2
    code, out = ssw(repo, "claims", "register", "C-404")
    assert (code, out) == (2, "ssw: C-404: no such claim in claims/claims.yaml")
