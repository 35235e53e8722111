"""claims/claims.yaml: what each claim computes, from which evidence, and the bounds decided before
it. Every problem is a ConfigError (exit 2) naming the claim and the key.

    schema_version: 1
    readme: {path: README.md, allow: [{pattern: 'sha256', why: "a hash's name"}]}
    claims:
      - id: C-001
        title: ...
        statement: "ssw's overhead per step is {ratio} of mini-swe-agent's"   # {value} placeholders
        metrics: [perf.overhead]              # named functions (claims.metrics), never code
        evidence: {results: bench/perf/results.json}   # role -> path or paths
        bounds: ["ratio <= 1/3"]              # VALUE OP NUMBER, all must hold
        bounds_set_by: "where the bound was decided, before the evidence"
        status: registered                    # registered | accepted | rejected | withdrawn
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from stepswitch.claims.inputs import checked_path
from stepswitch.claims.metrics import Metric, all_metrics
from stepswitch.claims.numbers import Bound, Fmt, parse_bound
from stepswitch.errors import ConfigError
from stepswitch.util.config_model import Strict, Wording, dotted, validate

CLAIMS_FILE = "claims/claims.yaml"
EVIDENCE_DIR = "claims/evidence"
Status = Literal["registered", "accepted", "rejected", "withdrawn"]
Text = Annotated[str, Field(min_length=1, strict=True)]
ClaimId = Annotated[str, Field(pattern=r"^C-\d{3,}$", strict=True)]
PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
NUMBER = re.compile(r"\d[\d.,]*")


class Claim(Strict):
    id: ClaimId
    title: Text
    statement: Text
    metrics: list[Text] = Field(min_length=1)
    evidence: dict[Text, Text | list[Text]] = Field(default_factory=dict)
    params: dict[Text, Text] = Field(default_factory=dict)
    bounds: list[Text] = Field(min_length=1)
    bounds_set_by: Text  # where the bounds were decided, before any evidence
    status: Status
    # Why evidence older than the registration may count (result files only, never bench runs).
    retrospective: Text | None = None
    reason: Text | None = None  # withdrawn (required) or rejected: why
    adr: Text | None = None  # withdrawn: the decision record that says so

    def text_sha256(self) -> str:
        """The hash registration records: what must be fixed before the evidence exists."""
        fixed = self.model_dump(
            include={"id", "title", "statement", "metrics", "params", "bounds", "bounds_set_by"}
        )
        text = json.dumps(fixed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def ranges(self) -> dict[str, list[str]]:
        """What the claim ranges over: each evidence role's paths (its suites, projects, runs),
        in no order."""
        return {r: sorted([p] if isinstance(p, str) else p) for r, p in self.evidence.items()}

    def ranges_sha256(self) -> str:
        """The hash a registration records beside the text's (ADR 0078): a claim proved on
        other evidence than it was registered over is refused."""
        text = json.dumps(self.ranges(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


class AllowRule(Strict):
    """A quantity the code fixes, blessed where the pattern matches: every match holds `value`
    and no other number, and `source` (`path.py:NAME`) holds it (claims/allowed.py, ADR 0077)."""

    pattern: Text  # a regular expression; what it matches may hold digits
    why: Text
    value: int | float | None = None
    source: Text | None = None  # path/to/module.py:NAME, a module-level constant


class ReadmeSpec(Strict):
    path: Text = "README.md"
    allow: list[AllowRule] = Field(default_factory=list)


class ClaimsFile(Strict):
    schema_version: Literal[1] = 1
    readme: ReadmeSpec = ReadmeSpec()
    claims: list[Claim] = Field(min_length=1)


@dataclass(frozen=True)
class LoadedClaim:
    claim: Claim
    metrics: tuple[Metric, ...]
    values: dict[str, Fmt]
    bounds: tuple[Bound, ...]
    evidence: dict[str, list[str]]

    @property
    def id(self) -> str:
        return self.claim.id


@dataclass(frozen=True)
class Claims:
    root: Path
    readme: ReadmeSpec
    allow: tuple[re.Pattern[str], ...]
    claims: tuple[LoadedClaim, ...]

    def get(self, claim_id: str) -> LoadedClaim | None:
        return next((c for c in self.claims if c.id == claim_id), None)


CLAIM_ID = re.compile(r"\bC-\d{3,}\b")


def typed_numbers(text: str, allow: tuple[re.Pattern[str], ...]) -> list[tuple[int, str]]:
    """Digits in `text` that no allow rule covers, claim ids aside: (offset, the number as
    written)."""
    chars = list(text)
    for pattern in (CLAIM_ID, *allow):
        for found in pattern.finditer(text):
            chars[found.start() : found.end()] = " " * (found.end() - found.start())
    blanked = "".join(chars)
    return [(m.start(), m.group().rstrip(".,")) for m in NUMBER.finditer(blanked)]


def _error(key: str, problem: str, fix: str = "") -> ConfigError:
    return ConfigError(CLAIMS_FILE, key, problem, fix)


def _under(prefix: str) -> Wording:
    """An error's key under `prefix` (a claim's id), as pydantic writes the rest."""
    return lambda error: f"{prefix}.{where}" if (where := dotted(error["loc"])) else prefix


def _resolve(claim: Claim, root: Path, allow: tuple[re.Pattern[str], ...]) -> LoadedClaim:
    cid = claim.id
    known = all_metrics()
    metrics: list[Metric] = []
    values: dict[str, Fmt] = {}
    giver: dict[str, str] = {}
    for i, name in enumerate(claim.metrics):
        metric = known.get(name)
        if metric is None:
            raise _error(
                f"{cid}.metrics[{i}]", f"unknown metric {name!r}", f"one of {', '.join(known)}"
            )
        for value, fmt in metric.values.items():
            if value in values:
                raise _error(
                    f"{cid}.metrics", f"{giver[value]} and {name} both give the value {value!r}"
                )
            values[value], giver[value] = fmt, name
        metrics.append(metric)
    bounds = []
    for i, text in enumerate(claim.bounds):
        try:
            bound = parse_bound(text)
        except ValueError as exc:
            raise _error(f"{cid}.bounds[{i}]", str(exc)) from None
        if bound.value not in values:
            raise _error(f"{cid}.bounds[{i}]", f"no metric of {cid} gives {bound.value!r}")
        if values[bound.value].kind == "text":
            raise _error(f"{cid}.bounds[{i}]", f"{bound.value!r} is text, not a number")
        bounds.append(bound)
    for key in ("title", "statement", "reason", "bounds_set_by", "retrospective"):
        text = getattr(claim, key)
        if text is None:
            continue
        for name in PLACEHOLDER.findall(text):
            if name not in values:
                raise _error(f"{cid}.{key}", f"{{{name}}} names no value of {cid}'s metrics")
        typed = typed_numbers(PLACEHOLDER.sub(" ", text), allow)
        if typed:
            raise _error(
                f"{cid}.{key}",
                f"{typed[0][1]!r} is typed, not computed",
                "use a {value} placeholder, or an allow rule in readme.allow",
            )
    needed = {role for metric in metrics for role in metric.reads}
    evidence = {r: [p] if isinstance(p, str) else list(p) for r, p in claim.evidence.items()}
    if evidence:
        for role in sorted(needed - set(evidence)):
            reader = next(m.name for m in metrics if role in m.reads)
            raise _error(f"{cid}.evidence", f"{reader} reads {role!r}", f"add evidence.{role}")
        for role, paths in sorted(evidence.items()):
            if role not in needed:
                raise _error(f"{cid}.evidence.{role}", f"no metric of {cid} reads {role!r}")
            if not paths:
                raise _error(f"{cid}.evidence.{role}", "names no path")
            for path in paths:
                try:
                    checked_path(path)
                except ValueError as exc:
                    raise _error(f"{cid}.evidence.{role}", str(exc)) from None
                if not (root / path).exists() and claim.status != "registered":
                    raise _error(f"{cid}.evidence.{role}", f"{path} does not exist")
    wanted = {p for metric in metrics for p in metric.params}
    for name in sorted(wanted ^ set(claim.params)):
        problem = "is needed by its metrics" if name in wanted else "is read by no metric"
        raise _error(f"{cid}.params.{name}", problem)
    _check_status(claim, root, bool(evidence))
    if any(not (root / p).exists() for paths in evidence.values() for p in paths):
        # Registered before its evidence, naming where the evidence will be: the registration
        # fixes that range (ADR 0078); nothing is proved until every file exists.
        evidence = {}
    return LoadedClaim(claim, tuple(metrics), values, tuple(bounds), evidence)


def _check_status(claim: Claim, root: Path, has_evidence: bool) -> None:
    cid = claim.id
    if claim.status == "withdrawn":
        if claim.reason is None or claim.adr is None:
            raise _error(f"{cid}.status", "a withdrawn claim needs a reason and an adr")
        try:
            checked_path(claim.adr)
        except ValueError as exc:
            raise _error(f"{cid}.adr", str(exc)) from None
        if not (root / claim.adr).is_file():
            raise _error(f"{cid}.adr", f"{claim.adr} does not exist")
    elif claim.adr is not None:
        raise _error(f"{cid}.adr", "only a withdrawn claim names an adr")
    if claim.status in ("accepted", "rejected") and not has_evidence:
        raise _error(
            f"{cid}.status", f"{claim.status} needs evidence", "status: registered until then"
        )


def load_claims(root: Path) -> Claims:
    from stepswitch.claims.yamlio import parse_yaml

    path = root / CLAIMS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _error("(file)", "does not exist", "run ssw prove from the repository") from None
    raw: Any = parse_yaml(text, CLAIMS_FILE)
    if not isinstance(raw, dict):
        raise _error("(file)", "is not a mapping with schema_version, readme and claims")
    entries = raw.get("claims")
    if not isinstance(entries, list):
        raise _error("claims", "is not a list of claims")
    claims: list[Claim] = []
    for i, entry in enumerate(entries):
        label = entry.get("id") if isinstance(entry, dict) else None
        prefix = label if isinstance(label, str) else f"claims[{i}]"
        claims.append(validate(Claim, entry, CLAIMS_FILE, key=_under(prefix)))
    seen: set[str] = set()
    for claim in claims:
        if claim.id in seen:
            raise _error(f"{claim.id}.id", f"{claim.id} is the id of two claims")
        seen.add(claim.id)
    data = {**raw, "claims": [c.model_dump() for c in claims]}
    parsed = validate(ClaimsFile, data, CLAIMS_FILE, key=_under("(file)"))
    allow = []
    for i, rule in enumerate(parsed.readme.allow):
        try:
            allow.append(re.compile(rule.pattern))
        except re.error as exc:
            raise _error(f"readme.allow[{i}].pattern", f"not a regular expression: {exc}") from None
    try:
        checked_path(parsed.readme.path)
    except ValueError as exc:
        raise _error("readme.path", str(exc)) from None
    patterns = tuple(allow)
    loaded = tuple(_resolve(claim, root, patterns) for claim in parsed.claims)
    return Claims(root, parsed.readme, patterns, loaded)
