"""Evidence that cannot be bent (issue 44, ADR 0078): the registration log is compared with git
from the commit it starts at (claims/log_start.yaml), whatever a later version holds. Each tamper
runs through the real CLI on a small repository of its own, beside a control that passes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stepswitch.claims.registration import dump_log, load_log
from tests.claims.conftest import CLAIMS_HEAD, OVERHEAD_CLAIM, README, commit_all, ssw

LOG = "claims/registrations.yaml"
OLD_FORM = """\
schema_version: 1
registrations:
  C-001: {commit: 0000000000000000000000000000000000000000, date: '2026-11-01T00:00:00+00:00'}
"""


def problems(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("problem:")]


def test_a_log_cut_by_a_version_in_the_old_form_still_shows_the_deleted_claim(
    make_repo: Callable[..., Path],
) -> None:
    root = make_repo()
    commit_all(root, "C-001 and C-002 registered and proved")
    assert ssw(root, "prove", "--check")[0] == 0  # the control
    c001 = [entry for entry in load_log(root).entries if entry.claim == "C-001"]
    # A version in the old form used to end the comparison with git: everything before it
    # could go, C-002 with its claim, its evidence and its README line.
    (root / LOG).write_text(OLD_FORM)
    cut = commit_all(root, "the log in the old form")
    (root / LOG).write_text(dump_log(c001))
    (root / "claims/claims.yaml").write_text(CLAIMS_HEAD + OVERHEAD_CLAIM)
    (root / "claims/evidence/C-002.json").unlink()
    readme = README.replace("- <!-- claim C-002 --><!-- /claim -->\n", "")
    (root / "README.md").write_text(readme.replace("See C-002 too.\n", ""))
    commit_all(root, "C-002 gone")
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
