"""Evidence that cannot be bent (issue 44, ADR 0078): the registration log is compared with git
from the commit it starts at (claims/log_start.yaml), whatever a later version holds. Each tamper
runs through the real CLI on a small repository of its own, beside a control that passes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stepswitch.claims.registration import dump_log, load_log
from tests.claims.conftest import CLAIMS_HEAD, commit_all, inrun_claim, line_of, ssw
from tests.claims.test_raw_samples import copy, make

LOG = "claims/registrations.yaml"
PERF = "bench/perf/results.json"
OLD_FORM = """\
schema_version: 1
registrations:
  C-001: {commit: 0000000000000000000000000000000000000000, date: '2026-11-01T00:00:00+00:00'}
"""


def problems(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("problem:")]


def cut_the_log_and_delete_c002(root: Path) -> str:
    """The route-3 tamper, committed: a version of the log in the old form, then C-002 gone
    with its claim, its evidence, its README lines and its registrations; the cut's commit."""
    c001 = [entry for entry in load_log(root).entries if entry.claim == "C-001"]
    # A version in the old form used to end the comparison with git: everything before it
    # could go, C-002 with its claim, its evidence and its README line.
    (root / LOG).write_text(OLD_FORM)
    cut = commit_all(root, "the log in the old form")
    (root / LOG).write_text(dump_log(c001))
    claims = root / "claims/claims.yaml"
    claims.write_text(claims.read_text().split("  - id: C-002\n")[0])
    (root / "claims/evidence/C-002.json").unlink()
    readme = (root / "README.md").read_text().splitlines(keepends=True)
    gone = ("<!-- claim C-002 -->", "See C-002 too.")
    (root / "README.md").write_text("".join(x for x in readme if not any(g in x for g in gone)))
    commit_all(root, "C-002 gone")
    return cut


def test_a_log_cut_by_a_version_in_the_old_form_still_shows_the_deleted_claim(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo()  # the control: proved at exit 0, the log compared with git
    commit_all(root, "C-001 and C-002 registered and proved")
    cut = cut_the_log_and_delete_c002(root)
    code, out = ssw(root, "prove", "--check")
    assert code == 1, out
    found = problems(out)
    assert (
        f"problem: {LOG} at commit {cut[:12]} is in the old form (schema_version: 1), after the "
        "log started at commit"
    ) in found[0], found
    assert any(
        f"problem: {LOG}: C-002's registration of " in p
        and "is gone, and C-002 with it from claims.yaml" in p
        for p in found
    ), found


def _check_after(root: Path, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    """`ssw prove --check` after `edit` of the committed perf results: its problem lines."""
    path = root / PERF
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=1))
    code, out = ssw(root, "prove", "--check")
    assert code == 1, out
    return problems(out)


def test_a_measurement_dated_before_its_commit_or_naming_no_commit_here_is_refused(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo()  # the control: proved at exit 0 from the same file, its commit here
    original = (root / PERF).read_text()
    moved = "2026-11-27T12:00:00+00:00"  # the day before the commit it names
    found = _check_after(root, lambda data: data.update(date=moved))
    where = f"{PERF} line {line_of(root, PERF, moved)}"
    assert any(
        p.startswith(
            f"problem: C-001: evidence refused: {where} is dated {moved}, before its commit "
        )
        for p in found
    ), found
    (root / PERF).write_text(original)
    found = _check_after(root, lambda data: data["machine"].update(stepswitch_commit="0badc0de"))
    where = f"{PERF} line {line_of(root, PERF, '0badc0de')}"
    assert (
        f"problem: C-001: evidence refused: {where} names ssw commit 0badc0de, which is not in "
        "this history: measure again at a commit that landed"
    ) in found, found


PROJECTS = ("boltons", "pyflakes")


def test_a_claim_proved_on_fewer_projects_than_it_was_registered_over_is_refused(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    for project in PROJECTS:
        copy(root, f"bench/gates/summary-{project}.json")
        copy(root, f"bench/gates/results-{project}.csv")
    make(root, inrun_claim("C-001", PROJECTS), ["C-001"])  # registered over both projects
    code, out = ssw(root, "prove")
    assert code == 0, out  # the control
    (root / "claims/claims.yaml").write_text(CLAIMS_HEAD + inrun_claim("C-001", PROJECTS[:1]))
    code, out = ssw(root, "prove", "--check")
    assert code == 1, out
    assert any(
        p.startswith(
            "problem: C-001: evidence refused: what it ranges over (its evidence: results "
            "bench/gates/results-boltons.csv; summaries bench/gates/summary-boltons.json) is "
            "not what its registration of "
        )
        and f"({LOG} line 6) fixed: register it again (ssw claims register C-001)" in p
        for p in problems(out)
    ), out
