"""A withdrawn claim names the decision record that withdraws it (issue 44): the record must
name the claim, and where git's history is whole, the claim's evidence must have rejected it in
a commit before the one that added the record. A claim is not withdrawn to hide a rejection that
never happened, nor by a record written for something else."""

from __future__ import annotations

import json
from pathlib import Path

from stepswitch.claims.git_view import GitView
from stepswitch.claims.model import Claim


def withdrawal_problems(root: Path, claim: Claim, evidence_rel: str, git: GitView) -> list[str]:
    """What is wrong with `claim`'s withdrawal (claims.yaml already checked that its record
    exists); [] when nothing is."""
    adr = claim.adr or ""
    cid = claim.id
    found = []
    text = (root / adr).read_text(encoding="utf-8", errors="replace")
    if cid not in text:
        found.append(f"{cid}: withdrawn by {adr}, which does not name {cid}: the record that "
                     "withdraws a claim says which claim and why")  # fmt: skip
    if not git.has_history():
        return found  # no git, or a shallow clone: the order cannot be told
    rejected = _first_rejection(git, evidence_rel)
    if rejected is None:
        found.append(
            f"{cid}: withdrawn, but no committed {evidence_rel} ever rejected it: a claim is "
            "withdrawn after its evidence rejects it, never instead"
        )
        return found
    added = git.added_in(adr)
    if added is not None and (added == rejected or not git.is_ancestor(rejected, added)):
        found.append(
            f"{cid}: withdrawn by {adr}, added at commit {added[:12]}, not after the rejection "
            f"committed at {rejected[:12]}: write the record that withdraws it after the rejection"
        )
    return found


def _first_rejection(git: GitView, evidence_rel: str) -> str | None:
    """The oldest commit whose `evidence_rel` says rejected; None when none does."""
    for commit, text in reversed(git.versions(evidence_rel)):
        try:
            verdict = json.loads(text).get("verdict")
        except (json.JSONDecodeError, AttributeError):
            continue
        if verdict == "rejected":
            return commit
    return None
