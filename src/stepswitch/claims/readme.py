"""The README's numbers, rendered from evidence files, and what differs when they are not.

    <!-- claim C-005 ratio -->0.30<!-- /claim -->   one value of a claim
    <!-- claim C-005 -->...<!-- /claim -->          the whole claim: state, statement, bounds
    <!-- claims-index -->...<!-- /claims-index -->  a table of every claim, withdrawn ones too
    <!-- claims-section --> ... <!-- /claims-section -->
        inside, a number that no marker rendered fails `ssw prove --check`; outside, the rules
        of claims/lint.py apply (which lints every shipped Markdown file, claims/shipped.py)

The text between a marker's two comments is replaced; everything else is left as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stepswitch.claims.evidence import Evidence
from stepswitch.claims.model import EVIDENCE_DIR, Claims
from stepswitch.errors import ConfigError

MARKER = re.compile(r"<!-- claim (\S+?)(?: (\S+?))? -->(.*?)<!-- /claim -->", re.DOTALL)
INDEX = re.compile(r"<!-- claims-index -->(.*?)<!-- /claims-index -->", re.DOTALL)
SECTION = re.compile(r"<!-- claims-section -->(.*?)<!-- /claims-section -->", re.DOTALL)
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_OPENERS = (
    ("<!-- claim ", "<!-- /claim -->"),
    ("<!-- claims-index -->", "<!-- /claims-index -->"),
    ("<!-- claims-section -->", "<!-- /claims-section -->"),
)


@dataclass(frozen=True)
class Marker:
    claim: str
    value: str | None
    line: int


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _balanced(text: str, name: str) -> None:
    for opener, closer in _OPENERS:
        tokens = sorted(
            [(m.start(), 1) for m in re.finditer(re.escape(opener), text)]
            + [(m.start(), -1) for m in re.finditer(re.escape(closer), text)]
        )
        depth = 0
        for at, step in tokens:
            depth += step
            if depth not in (0, 1):
                problem = "is nested in another" if depth > 1 else "closes nothing"
                raise ConfigError(name, f"line {_line(text, at)}", f"{opener.strip()} {problem}")
        if depth:
            at = tokens[-1][0]
            raise ConfigError(name, f"line {_line(text, at)}", f"{opener.strip()} is not closed")


def markers(text: str, claims: Claims, name: str) -> list[Marker]:
    """Every claim marker; an unknown claim or value, or an unclosed marker, is exit 2."""
    _balanced(text, name)
    found = []
    for m in MARKER.finditer(text):
        line = _line(text, m.start())
        claim = claims.get(m.group(1))
        if claim is None:
            raise ConfigError(
                name, f"line {line}", f"marker names {m.group(1)}, which is no claim in claims.yaml"
            )
        value = m.group(2)
        if value is not None and value not in claim.values:
            known = ", ".join(claim.values)
            raise ConfigError(
                name, f"line {line}", f"{claim.id} has no value {value!r} (its values: {known})"
            )
        found.append(Marker(claim.id, value, line))
    return found


def _link(readme: str, claim_id: str) -> str:
    target = os.path.relpath(f"{EVIDENCE_DIR}/{claim_id}.json", os.path.dirname(readme) or ".")
    return f"[evidence]({target.replace(os.sep, '/')})"


def value_text(evidence: Evidence, value: str) -> str:
    if evidence.verdict == "not_proved":
        return evidence.shown
    if evidence.verdict == "withdrawn":
        return "withdrawn"
    text = evidence.values[value].text
    return f"{text} (rejected: {evidence.claim})" if evidence.verdict == "rejected" else text


def _noted(text: str, notes: Sequence[str]) -> str:
    """`text` with what the registration log says about the claim (a bound changed)."""
    return "".join([text, *(f" {note[0].upper()}{note[1:]}." for note in notes)])


def claim_text(evidence: Evidence, readme: str, notes: Sequence[str] = ()) -> str:
    head = f"**{evidence.claim} ({evidence.shown}):**"
    link = _link(readme, evidence.claim)
    if evidence.verdict == "withdrawn":
        head = f"**{evidence.claim} (withdrawn: {evidence.reason}; {evidence.adr}):**"
        return _noted(f"{head} {evidence.title}.", notes)
    label = "Bound" if len(evidence.bounds) == 1 else "Bounds"
    retrospective = ""
    if evidence.retrospective:
        retrospective = f" Registered after the measurement: {evidence.retrospective}."
    if evidence.verdict == "not_proved":
        bounds = "; ".join(b.bound for b in evidence.bounds)
        text = f"{head} {evidence.title}. {label}: {bounds}, set by {evidence.bounds_set_by}."
        return f"{_noted(text, notes)}{retrospective} {link}"
    held = "; ".join(f"{b.bound} ({'holds' if b.holds else 'FAILS'})" for b in evidence.bounds)
    text = f"{head} {evidence.statement} {label}: {held}, set by {evidence.bounds_set_by}."
    return f"{_noted(text, notes)}{retrospective} {link}"


def index_text(
    evidences: Mapping[str, Evidence],
    readme: str,
    notes: Mapping[str, Sequence[str]] | None = None,
) -> str:
    rows = ["", "| claim | what | status | evidence |", "| --- | --- | --- | --- |"]
    for cid, evidence in sorted(evidences.items()):
        state = evidence.shown
        if evidence.verdict == "withdrawn":
            state = f"withdrawn: {evidence.reason} ({evidence.adr})"
        elif evidence.verdict == "rejected" and evidence.why:
            state = f"{state} ({'; '.join(evidence.why)})"  # which bound failed, at what value
        state = "; ".join([state, *(notes or {}).get(cid, ())]).replace("|", "\\|")
        title = evidence.title.replace("|", "\\|")
        rows.append(f"| {cid} | {title} | {state} | {_link(readme, cid)} |")
    return "\n".join(rows) + "\n"


def render(
    text: str,
    evidences: Mapping[str, Evidence],
    readme: str,
    notes: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The README with every marker and the index rendered from the evidence files, and each
    claim's `notes` (what its registration log shows: a bound changed after it was registered)
    next to it; its earlier measurements (the evidence's `earlier`) follow its text, and the index
    counts them."""
    noted = notes or {}

    def one(m: re.Match[str]) -> str:
        cid = m.group(1)
        evidence = evidences[cid]
        inner = (
            value_text(evidence, m.group(2))
            if m.group(2)
            else claim_text(
                evidence, readme, [*noted.get(cid, ()), *(e.note() for e in evidence.earlier)]
            )
        )
        head = m.group(0)[: m.group(0).index("-->") + 3]
        return f"{head}{inner}<!-- /claim -->"

    text = MARKER.sub(one, text)
    indexed = {
        cid: [*noted.get(cid, ()), *([f"measured {len(e.earlier) + 1} times"] if e.earlier else [])]
        for cid, e in evidences.items()
    }
    return INDEX.sub(
        lambda _: (
            f"<!-- claims-index -->{index_text(evidences, readme, indexed)}<!-- /claims-index -->"
        ),
        text,
    )


def shown_claims(text: str) -> set[str]:
    """The claims a reader can find in the README: each marker's, and all of them under an index."""
    found = {m.group(1) for m in MARKER.finditer(text)}
    return found | ({"*"} if INDEX.search(text) else set())


def _excerpt(old: str, new: str) -> tuple[str, str]:
    """The two texts around their first difference, short enough for one line."""
    at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
    at = min(len(old), len(new)) if at is None else at
    start = max(0, at - 20)

    def cut(text: str) -> str:
        return (
            ("..." if start else "")
            + text[start : at + 40]
            + ("..." if len(text) > at + 40 else "")
        )

    return cut(old), cut(new)


def _parts(text: str) -> list[tuple[str, int, str]]:
    """(which claim, offset, text) of each marker, and of each row of the claims index."""
    found = [
        (f"{m.group(1)} {m.group(2)}" if m.group(2) else m.group(1), m.start(3), m.group(3))
        for m in MARKER.finditer(text)
    ]
    for m in INDEX.finditer(text):
        at = m.start(1)
        for row in m.group(1).split("\n"):
            claim = re.match(r"\| (C-\d+) \|", row)
            found.append(
                (f"{claim.group(1)} in the claims index" if claim else "the claims index", at, row)
            )
            at += len(row) + 1
    return sorted(found, key=lambda part: part[1])


def differences(on_disk: str, rendered: str, name: str) -> list[str]:
    """What rendering would change, one line per marker or index row: claim, line, both texts."""
    old, new = _parts(on_disk), _parts(rendered)
    fix = "run ssw prove and commit the result"
    if [p[0] for p in old] != [p[0] for p in new]:  # an index row added or dropped
        changed = sorted({p[0] for p in old} ^ {p[0] for p in new})
        return [f"{name} would change: {', '.join(changed)}: {fix}"]
    lines = []
    for (what, at, was), (_, _, now) in zip(old, new, strict=True):
        if was != now:
            shown, wanted = _excerpt(was, now)
            lines.append(
                f"{name} would change at line {_line(on_disk, at)} (claim {what}): it shows "
                f"{shown!r}, the evidence gives {wanted!r}: {fix}"
            )
    return lines or [f"{name} would change: {fix}"]
