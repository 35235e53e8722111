"""What a claim ranges over when its registration recorded no range (ADR 0086): a claim
registered before ADR 0078, or before its evidence existed. Its range is what git shows
claims.yaml naming for it since that registration: the evidence may grow or be measured again,
but no role may name fewer paths than a committed version named, and no suite named then may be
dropped. A claim is not proved on fewer projects or suites than it was once shown over."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from stepswitch.claims.git_view import GitView
from stepswitch.claims.model import CLAIMS_FILE, Claim
from stepswitch.claims.yamlio import parse_yaml
from stepswitch.errors import ConfigError

SUITES = "suites"  # the role bench claims range over by folder: never one dropped


@dataclass(frozen=True)
class Narrower:
    """How a claim's evidence today is narrower than a committed version of claims.yaml named."""

    commit: str
    role: str
    then: tuple[str, ...]
    dropped: tuple[str, ...]  # suites named then and not now

    def text(self, now: int) -> str:
        at = f"{CLAIMS_FILE} at commit {self.commit[:12]}"
        if self.dropped:
            return (
                f"its evidence no longer names {SUITES} {', '.join(self.dropped)}, which {at} named"
            )
        paths = "path" if now == 1 else "paths"
        return f"its {self.role} name {now} {paths} where {at} named {len(self.then)}"


@cache
def _evidence_maps(text: str) -> dict[str, dict[str, tuple[str, ...]]]:
    """Each claim's evidence map in one version of claims.yaml (read as data: an older version
    need not be valid today), role -> paths; parsed once per process."""
    try:
        data: Any = parse_yaml(text, CLAIMS_FILE)
    except ConfigError:
        return {}  # a version git holds that does not parse: nothing it names can be compared
    claims = data.get("claims") if isinstance(data, dict) else None
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for claim in claims if isinstance(claims, list) else ():
        evidence = claim.get("evidence") if isinstance(claim, dict) else None
        if isinstance(evidence, dict):
            found[str(claim.get("id"))] = {
                str(role): tuple(map(str, [paths] if isinstance(paths, str) else paths or ()))
                for role, paths in evidence.items()
            }
    return found


def narrower(git: GitView, claim: Claim, since: str) -> list[tuple[Narrower, int]]:
    """Each committed version of claims.yaml from commit `since` on whose evidence map for
    `claim` is wider than today's, with today's count of the role; newest first."""
    now = claim.ranges()
    found = []
    for commit, text in git.versions(CLAIMS_FILE, since=since):
        for role, then in _evidence_maps(text).get(claim.id, {}).items():
            today = now.get(role, [])
            dropped = tuple(p for p in then if p not in today) if role == SUITES else ()
            if dropped or len(today) < len(then):
                found.append((Narrower(commit, role, then, dropped), len(today)))
    return found
