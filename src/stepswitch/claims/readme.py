"""The README's numbers, rendered from evidence files, and the lint of its claims sections.

    <!-- claim C-005 ratio -->0.30<!-- /claim -->   one value of a claim
    <!-- claim C-005 -->...<!-- /claim -->          the whole claim: state, statement, bounds
    <!-- claims-index -->...<!-- /claims-index -->  a table of every claim, withdrawn ones too
    <!-- claims-section --> ... <!-- /claims-section -->
        inside, a number that no marker rendered fails `ssw prove --check` (readme.allow in
        claims.yaml lists what may hold digits: version numbers, a hash's name, ...)

The text between a marker's two comments is replaced; everything else is left as it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from stepswitch.claims.evidence import Evidence
from stepswitch.claims.model import EVIDENCE_DIR, Claims, typed_numbers
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
        return "registered, not yet proved"
    if evidence.verdict == "withdrawn":
        return "withdrawn"
    text = evidence.values[value].text
    return f"{text} (rejected: {evidence.claim})" if evidence.verdict == "rejected" else text


def claim_text(evidence: Evidence, readme: str) -> str:
    head = f"**{evidence.claim} ({evidence.shown}):**"
    link = _link(readme, evidence.claim)
    if evidence.verdict == "withdrawn":
        head = f"**{evidence.claim} (withdrawn: {evidence.reason}; {evidence.adr}):**"
        return f"{head} {evidence.title}."
    label = "Bound" if len(evidence.bounds) == 1 else "Bounds"
    if evidence.verdict == "not_proved":
        bounds = "; ".join(b.bound for b in evidence.bounds)
        return (
            f"{head} {evidence.title}. {label}: {bounds}, set by {evidence.bounds_set_by}. {link}"
        )
    held = "; ".join(f"{b.bound} ({'holds' if b.holds else 'FAILS'})" for b in evidence.bounds)
    text = f"{head} {evidence.statement} {label}: {held}, set by {evidence.bounds_set_by}."
    if evidence.retrospective:
        text += f" Registered after the measurement: {evidence.retrospective}."
    return f"{text} {link}"


def index_text(evidences: Mapping[str, Evidence], readme: str) -> str:
    rows = ["", "| claim | what | status | evidence |", "| --- | --- | --- | --- |"]
    for cid, evidence in sorted(evidences.items()):
        state = evidence.shown
        if evidence.verdict == "withdrawn":
            state = f"withdrawn: {evidence.reason} ({evidence.adr})"
        title = evidence.title.replace("|", "\\|")
        rows.append(f"| {cid} | {title} | {state} | {_link(readme, cid)} |")
    return "\n".join(rows) + "\n"


def render(text: str, evidences: Mapping[str, Evidence], readme: str) -> str:
    def one(m: re.Match[str]) -> str:
        evidence = evidences[m.group(1)]
        inner = value_text(evidence, m.group(2)) if m.group(2) else claim_text(evidence, readme)
        head = m.group(0)[: m.group(0).index("-->") + 3]
        return f"{head}{inner}<!-- /claim -->"

    text = MARKER.sub(one, text)
    return INDEX.sub(
        lambda _: f"<!-- claims-index -->{index_text(evidences, readme)}<!-- /claims-index -->",
        text,
    )


def lint(text: str, claims: Claims, name: str) -> list[str]:
    """Numbers inside claims sections that no marker rendered, one problem line each."""
    problems = []
    for section in SECTION.finditer(text):
        body = section.group(1)
        blanked = body
        for pattern in (MARKER, INDEX, COMMENT):
            blanked = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), blanked)
        for offset, number in typed_numbers(blanked, claims.allow):
            line = _line(text, section.start(1) + offset)
            problems.append(
                f"{name}:{line}: {number!r} in a claims section is not rendered from evidence "
                "(put it in a claim marker, or allow it in claims.yaml readme.allow)"
            )
    return problems


def shown_claims(text: str) -> set[str]:
    """The claims a reader can find in the README: each marker's, and all of them under an index."""
    found = {m.group(1) for m in MARKER.finditer(text)}
    return found | ({"*"} if INDEX.search(text) else set())
