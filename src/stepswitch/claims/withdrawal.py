"""A withdrawn claim names the decision record that withdraws it (issue 44): the record must
name the claim, and where git's history is whole, the claim's evidence must have rejected it in
a commit before the one that added the record. A claim is not withdrawn to hide a rejection that
never happened, nor by a record written for something else."""

from __future__ import annotations

import json
from pathlib import Path

from stepswitch.claims.git_view import GitView
from stepswitch.claims.inputs import line_holding
from stepswitch.claims.model import CLAIMS_FILE, Claim


def withdrawal_problems(root: Path, claim: Claim, evidence_rel: str, git: GitView) -> list[str]:
    """What is wrong with `claim`'s withdrawal (claims.yaml already checked that its record
    exists); [] when nothing is."""
    adr = claim.adr or ""
    cid = claim.id
    found = []
    at = _adr_line(root, cid)
    text = (root / adr).read_text(encoding="utf-8", errors="replace")
    if cid not in text:
        found.append(f"{cid}: withdrawn by {adr} ({at}), which does not name {cid}: the record "
                     "that withdraws a claim says which claim and why")  # fmt: skip
    if not git.has_history():
        return found  # no git, or a shallow clone: the order cannot be told
    rejected = _first_rejection(git, evidence_rel)
    if rejected is None:
        found.append(
            f"{cid}: withdrawn ({at}), but no committed {evidence_rel} ever rejected it: a claim "
            "is withdrawn after its evidence rejects it, never instead"
        )
        return found
    added = git.added_in(adr)
    if added is not None and (added == rejected or not git.is_ancestor(rejected, added)):
        found.append(
            f"{cid}: withdrawn by {adr} ({at}), added at commit {added[:12]}, not after the "
            f"rejection committed at {rejected[:12]}: write the record that withdraws it after "
            "the rejection"
        )
    return found


def _adr_line(root: Path, cid: str) -> str:
    """Where claims.yaml names the record that withdraws `cid`: its `adr:` line, after the
    claim's `id:` line (that line when none follows)."""
    text = (root / CLAIMS_FILE).read_text(encoding="utf-8", errors="replace")
    start = line_holding(text, f"- id: {cid}")
    if start is None:
        return CLAIMS_FILE
    after = line_holding("\n".join(text.splitlines()[start:]), "adr:")
    return f"{CLAIMS_FILE} line {start if after is None else start + after}"


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
