"""This repository's own claims: the committed evidence and README are what proving makes them
(what CI's `ssw prove --check` checks), and the command stays cheap to import."""

from __future__ import annotations

import subprocess
import sys

from stepswitch.claims.prove import prove
from tests.claims.conftest import REPO


def test_the_committed_evidence_and_readme_are_what_proving_makes_them():
    done = prove(REPO, check=True)
    assert done.problems == []
    shown = {line.split()[0]: line.split("  ")[1].strip() for line in done.lines}
    # Whatever the latest measurements say, each claim shows the verdict claims.yaml records.
    assert shown and set(shown.values()) <= {
        "accepted",
        "rejected",
        "withdrawn",
        "registered, not yet proved",
    }


def test_importing_the_claims_commands_loads_no_engine():
    code = (
        "import sys, stepswitch.cli.claims; "
        "print(sorted(m for m in sys.modules if m.startswith('stepswitch.claims') "
        "or m in ('yaml', 'pydantic', 'git', 'httpx')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_the_claims_page_example_of_a_model_claim_is_a_valid_claim(tmp_path):
    import re
    import shutil

    from stepswitch.claims.model import load_claims

    page = (REPO / "docs/claims.md").read_text()  # the Claims page, where the README sends you
    example = re.search(r"```yaml\n(  - id: C-101\n.*?)```", page, re.S)
    assert example is not None
    (tmp_path / "claims").mkdir()
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    claims = (REPO / "claims/claims.yaml").read_text().split("\nclaims:\n")[0]
    (tmp_path / "claims/claims.yaml").write_text(f"{claims}\nclaims:\n{example.group(1)}")
    (loaded,) = load_claims(tmp_path).claims
    assert [m.name for m in loaded.metrics] == ["bench.paired_dollars"]
    assert loaded.claim.status == "registered"
    from stepswitch.claims.scope import shown_problems

    # ADR 0027: a paired claim shows its interval's width, and runs a suite with enough tasks.
    assert shown_problems(loaded.claim.statement, [(m.name, m.shows) for m in loaded.metrics]) == []
    assert "--suite bench/suites/humaneval" in page
