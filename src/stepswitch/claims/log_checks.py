"""The registration log's own checks (ADR 0016, issue 23): the chain of entries, registered
claims that are no claims, re-registrations that launder their claim, and, where git can tell,
an entry committed earlier and since edited or removed, or a commit git does not have."""

from __future__ import annotations

from stepswitch.claims.anchor import ANCHOR_FILE, Anchor
from stepswitch.claims.git_view import GitView
from stepswitch.claims.registration import (
    APPEND_ONLY,
    NEVER_DELETED,
    REGISTRATIONS_FILE,
    Log,
    Registration,
    bounds_text,
    parse_log,
)
from stepswitch.errors import ConfigError


def _chain_problems(log: Log) -> list[str]:
    found = []
    before: Registration | None = None
    for entry, line in zip(log.entries, log.lines, strict=True):
        head = f"{REGISTRATIONS_FILE} line {line} ({entry.claim}'s registration of {entry.date})"
        if before is None and entry.previous is not None:
            found.append(f"{head} chains to an entry that is gone: {APPEND_ONLY}")
        elif before is not None and entry.previous != before.sha256():
            found.append(
                f"{head} was not appended after the entry before it: an earlier entry was "
                f"edited, removed or inserted; {APPEND_ONLY}"
            )
        if before is not None and entry.when < before.when:
            found.append(f"{head} is dated before the entry before it: {APPEND_ONLY}")
        before = entry
    return found


def _claim_problems(log: Log, ids: set[str]) -> list[str]:
    found = []
    for cid in sorted({e.claim for e in log.entries}):
        history = log.of(cid)
        if cid not in ids:
            found.append(
                f"{REGISTRATIONS_FILE}: {cid} is registered but is no claim in claims.yaml "
                f"(line {history.lines[0]}): {NEVER_DELETED}"
            )
        first = history.entries[0]
        pairs = zip(history.entries, history.entries[1:], history.lines[1:], strict=False)
        for a, b, line in pairs:
            where = f"{REGISTRATIONS_FILE} line {line}"
            if b.retrospective is not None and b.retrospective != first.retrospective:
                found.append(
                    f"{where}: {cid}'s registration of {b.date} carries a new retrospective: a "
                    "retrospective is allowed only at a claim's first registration"
                )
            if a.bounds != b.bounds and a.bounds_set_by == b.bounds_set_by:
                found.append(
                    f"{where}: {cid}'s bounds changed on {b.date} (from {bounds_text(a.bounds)} "
                    f"to {bounds_text(b.bounds)}) but bounds_set_by did not: say where the new "
                    "bounds were decided"
                )
    return found


def _git_problems(git: GitView, log: Log, ids: set[str], since: str | None) -> list[str]:
    """Every entry git has committed since the log's start (`since`; None: in any version
    before the first in the old form) is still in the log, unchanged; every commit exists."""
    found = []
    for entry, line in zip(log.entries, log.lines, strict=True):
        if git.exists(entry.commit) is False:
            found.append(
                f"{REGISTRATIONS_FILE} line {line}: {entry.claim}'s registration of {entry.date} "
                f"names commit {entry.commit[:12]}, not in git"
            )
    now = {entry.content() for entry in log.entries}
    kept = {entry.claim for entry in log.entries}
    reported: set[str] = set()
    for commit, text in git.versions(REGISTRATIONS_FILE, since):
        if _pre_log(text):
            if since is None:
                break  # one registration per claim, rewritten in place: the log starts after it
            found.append(
                f"{REGISTRATIONS_FILE} at commit {commit[:12]} is in the old form "
                f"(schema_version: 1), after the log started at commit {since[:12]} "
                f"({ANCHOR_FILE}): {APPEND_ONLY}"
            )
            continue
        try:
            committed = parse_log(text, f"{REGISTRATIONS_FILE} at {commit[:12]}")
        except ConfigError:
            continue  # malformed when committed: ssw prove failed on that commit
        for entry, line in zip(committed.entries, committed.lines, strict=True):
            key = entry.content()
            if key in now or key in reported:
                continue
            reported.add(key)
            gone = (
                f"{entry.claim}'s registration of {entry.date} "
                f"(line {line} at commit {commit[:12]})"
            )
            if entry.claim not in kept and entry.claim not in ids:
                found.append(
                    f"{REGISTRATIONS_FILE}: {gone} is gone, and {entry.claim} with it from "
                    f"claims.yaml: {NEVER_DELETED}"
                )
            else:
                found.append(f"{REGISTRATIONS_FILE}: {gone} is gone or edited: {APPEND_ONLY}")
    return found


def _pre_log(text: str) -> bool:
    from stepswitch.claims.yamlio import parse_yaml

    try:
        raw = parse_yaml(text, REGISTRATIONS_FILE)
    except ConfigError:
        return False
    return isinstance(raw, dict) and raw.get("schema_version") == 1


def log_problems(git: GitView, log: Log, ids: set[str], start: Anchor) -> list[str]:
    """What is wrong with the log itself: a broken chain, a registered claim that is no claim, a
    re-registration that launders its claim, and (where git can tell) an entry committed since
    the log's start (`start`) and since edited or removed, or a commit git does not have."""
    found = [*_chain_problems(log), *_claim_problems(log, ids), *start.problems]
    if not start.unchecked:
        found += _git_problems(git, log, ids, start.since)
    return found
