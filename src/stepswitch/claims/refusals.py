"""Why a claim's evidence may not prove it (`refusals`): the claim unregistered or changed since
its registration, a registration git contradicts, and runs or measurements from before the
registration, or made for another claim (ADR 0016, issue 23)."""

from __future__ import annotations

from datetime import UTC

from stepswitch.claims.git_view import GitView, parse_time
from stepswitch.claims.inputs import Inputs
from stepswitch.claims.model import CLAIMS_FILE, Claim
from stepswitch.claims.ranges_history import narrower
from stepswitch.claims.registration import REGISTRATIONS_FILE, History, bounds_text


def refusals(claim: Claim, history: History, inputs: Inputs) -> list[str]:
    """Why this claim's evidence may not prove it; empty when it may."""
    cid = claim.id
    registration = history.latest
    if registration is None:
        return [f"not registered (ssw claims register {cid}, before its runs)"]
    found = []
    git = GitView(inputs.root)
    where = f"{REGISTRATIONS_FILE} line {history.lines[-1]}"
    if registration.text_sha256 != claim.text_sha256():
        found.append(
            f"its text changed since it was registered on {registration.date}: register it again "
            f"(ssw claims register {cid}); evidence from before that is then refused"
        )
    elif not registration.keeps(claim):
        found.append(
            f"what it ranges over (its evidence: {_ranges(claim)}) is not what its registration "
            f"of {registration.date} ({where}) fixed: register it again "
            f"(ssw claims register {cid}) before measuring on these; evidence from before that "
            "is then refused"
        )
    elif (registration.bounds, registration.bounds_set_by) != (
        list(claim.bounds),
        claim.bounds_set_by,
    ):
        found.append(
            f"its registration ({where}) records bounds {bounds_text(registration.bounds)} set "
            f"by {registration.bounds_set_by!r}, not the ones its text hash covers"
        )
    if registration.ranges_sha256 is None and (wider := narrower(git, claim, registration.commit)):
        then, today = wider[0]
        found.append(
            f"{_claim_line(inputs, cid)}: {then.text(today)}, since its registration recorded no "
            f"range ({where}, {registration.date}): a claim is not proved on less than it was "
            f"shown over; register it again (ssw claims register {cid}) to measure it on these, "
            "and evidence from before that is then refused"
        )
    first = history.entries[0]
    if claim.retrospective is not None and claim.retrospective != first.retrospective:
        found.append(
            f"its retrospective is not the one its first registration recorded ({first.date}, "
            f"{REGISTRATIONS_FILE} line {history.lines[0]}): a retrospective is allowed only at "
            "a claim's first registration"
        )
    exists = git.exists(registration.commit)
    if exists is False:
        found.append(f"its registration names commit {registration.commit[:12]}, not in git")
    committed = git.committed_at(registration.commit) if exists else None
    if committed is not None and committed > registration.when:
        found.append(
            f"its registration is dated {registration.date}, before its own commit "
            f"{registration.commit[:12]} ({committed.isoformat()})"
        )
    for run in inputs.runs:
        started = parse_time(run.started_at)
        if started is None:
            found.append(f"run {run.folder}: started_at {run.started_at!r} is not a date-time")
        elif started < registration.when:
            found.append(
                f"run {run.folder} started at {run.started_at}, before {cid} was registered "
                f"({registration.date})"
            )
        if run.claims and cid not in run.claims:
            found.append(f"run {run.folder} was run for {', '.join(run.claims)}, not {cid}")
        if run.base_commit and git.is_ancestor(registration.commit, run.base_commit) is False:
            found.append(
                f"run {run.folder} ran on {run.base_commit[:12]}, which does not descend from "
                f"{cid}'s registration commit {registration.commit[:12]}"
            )
    found += made_problems(inputs, git)
    for path, why in sorted(inputs.undated.items()):
        found.append(f"{path} cannot show it was made after {cid} was registered: {why}")
    at = history.bounds_from()
    judged_by = history.entries[at]
    refused: set[str] = set()  # the records their date refuses: not refused twice
    for path, when in sorted(inputs.measured.items()):
        measured = parse_time(when)
        if measured is None:
            found.append(f"{path}: its date {when!r} is not a date")
        elif measured < judged_by.when and at > 0:
            refused.add(path)
            found.append(
                f"{inputs.where(path, when)} was measured on {when}, before the bounds it is "
                "judged by "
                f"({bounds_text(judged_by.bounds)}) were registered on {judged_by.date} "
                f"({REGISTRATIONS_FILE} line {history.lines[at]}): evidence measured before "
                "the registration of its bounds is refused, whatever the retrospective says"
            )
        elif measured < registration.when and claim.retrospective is None:
            refused.add(path)
            found.append(
                f"{inputs.where(path, when)} was measured on {when}, before {cid} was registered "
                f"({registration.date}); a claim registered after its measurement must say why "
                "its bounds were fixed before it (retrospective)"
            )
    # One dated after its registration is refused all the same when its commit is older.
    return found + _made_before(inputs, git, history, at, claim.retrospective is None, refused)


def _made_before(
    inputs: Inputs,
    git: GitView,
    history: History,
    at: int,
    first_counts: bool,
    refused: set[str],
) -> list[str]:
    """A record made at an ssw commit that does not descend from the commit the claim's bounds
    were registered at (`history.entries[at]`, when they changed after its first registration)
    or, when `first_counts` (no retrospective), the commit of its latest registration, ran
    code older than what judges it: its date, which a producer writes, cannot say otherwise."""
    found = []
    marks = [at] if at > 0 else []
    if first_counts and len(history.entries) - 1 not in marks:
        marks.append(len(history.entries) - 1)
    for path, made in sorted(inputs.made.items()):
        if path in refused:
            continue
        for i in marks:
            entry = history.entries[i]
            if git.is_ancestor(entry.commit, made.commit) is not False:
                continue
            what = f"its bounds ({bounds_text(entry.bounds)}) were" if i == at else "it was"
            found.append(
                f"{inputs.where(path, made.commit)} names ssw commit {made.commit[:12]}, which is "
                f"not after the commit {what} registered at ({entry.commit[:12]}, "
                f"{REGISTRATIONS_FILE} line {history.lines[i]}): a measurement is made at or "
                "after the commit of the registration that judges it, whatever its date says"
            )
            break
    return found


def _claim_line(inputs: Inputs, cid: str) -> str:
    """Where claims.yaml holds the claim: `claims/claims.yaml line N`."""
    return inputs.where(CLAIMS_FILE, f"- id: {cid}")


def _ranges(claim: Claim) -> str:
    return "; ".join(f"{role} {', '.join(paths)}" for role, paths in sorted(claim.ranges().items()))


def made_problems(inputs: Inputs, git: GitView) -> list[str]:
    """A record's own ssw commit (`Inputs.made_at`) must be in this history, and the record no
    older than that commit: its date is the producer's, checked against git's (ADR 0078)."""
    found = []
    for path, made in sorted(inputs.made.items()):
        known = git.in_history(made.commit)
        if known is False:
            found.append(
                f"{inputs.where(path, made.commit)} names ssw commit {made.commit[:12]}, which "
                "is not in this history: measure again at a commit that landed"
            )
            continue
        committed = git.committed_at(made.commit) if known else None
        when = parse_time(made.when)
        if committed is None or when is None:
            continue  # no git, or a date the metric's own checks report
        committed = committed.astimezone(UTC)
        # A date alone is a day: before the commit's day only when that day is earlier.
        before = when.date() < committed.date() if len(made.when) == 10 else when < committed
        if before:
            found.append(
                f"{inputs.where(path, made.when)} is dated {made.when}, before its commit "
                f"{made.commit[:12]} was made "
                f"({committed.isoformat()}): a record is made after the commit it ran"
            )
    return found
