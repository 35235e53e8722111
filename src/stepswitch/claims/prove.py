"""`ssw prove`: recompute each claim from its committed evidence, offline, write
claims/evidence/<id>.json, and render the numbers of the README and of every docs page that holds a
claim marker from the evidence files.

Malformed input (claims.yaml, registrations, a README marker, an evidence file its metric cannot
read) raises a ConfigError/UsageError before anything is written: exit 2. Everything else that is
wrong is a problem line (exit 1): refused or inconsistent evidence, a status claims.yaml declares
that the evidence does not give, a claim that says more than the runs behind it can
(claims/scope.py), a number typed into any Markdown file shipped (claims/lint.py,
claims/shipped.py), a readme.allow entry its constant does not hold (claims/allowed.py), a file of
docs/runs its record does not name as it is (claims/runs_record.py), a claim the README does not
show, a registration log with an entry edited, removed or laundering its claim
(claims/registration.py), and with `check` any file that proving would change (the README, a
page, an evidence file)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import stepswitch
from stepswitch.claims import lint as lint_mod
from stepswitch.claims import pages as pages_mod
from stepswitch.claims import readme as readme_mod
from stepswitch.claims import runs_record
from stepswitch.claims.allowed import source_problems
from stepswitch.claims.anchor import anchor
from stepswitch.claims.code import changed_code, code_hashes
from stepswitch.claims.evidence import (
    BoundResult,
    Evidence,
    InputHash,
    RegistrationSeen,
    RunInput,
    ValueText,
    Verdict,
    dump_evidence,
    read_evidence,
)
from stepswitch.claims.git_view import GitView
from stepswitch.claims.history import earlier_measurements
from stepswitch.claims.inputs import EvidenceError, Inputs, Unprovable, line_holding
from stepswitch.claims.log_checks import log_problems
from stepswitch.claims.model import EVIDENCE_DIR, PLACEHOLDER, Claims, LoadedClaim, load_claims
from stepswitch.claims.numbers import Bound, Fmt, Value, canonical, fixed
from stepswitch.claims.refusals import refusals
from stepswitch.claims.registration import History, bound_notes, load_log
from stepswitch.claims.scope import EvidenceKind, shown_problems, word_problems
from stepswitch.claims.shipped import shipped_markdown
from stepswitch.claims.withdrawal import withdrawal_problems
from stepswitch.errors import ConfigError, HarnessError, UsageError
from stepswitch.util.hashing import hash_path

TOOL = {"name": "stepswitch", "version": stepswitch.__version__}


@dataclass
class Proved:
    claims: Claims
    evidence: dict[str, Evidence]  # every claim's, selected ones recomputed
    files: dict[str, str]  # path -> the text proving gives it (evidence files, README, pages)
    changed: list[str] = field(default_factory=list)  # of those, the ones that differ on disk
    problems: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # one per claim proved, for the terminal
    unchecked: list[str] = field(default_factory=list)  # what a shallow clone let go unchecked


def evidence_path(claim_id: str) -> str:
    return f"{EVIDENCE_DIR}/{claim_id}.json"


def _base(lc: LoadedClaim, history: History) -> dict[str, object]:
    claim = lc.claim
    registration = history.latest
    seen = None
    if registration is not None:
        seen = RegistrationSeen(
            commit=registration.commit,
            date=registration.date,
            text_sha256=registration.text_sha256,
        )
    return {
        "claim": claim.id,
        "title": claim.title,
        "status": claim.status,
        "bounds_set_by": claim.bounds_set_by,
        "retrospective": claim.retrospective,
        "reason": claim.reason,
        "adr": claim.adr,
        "metrics": list(claim.metrics),
        "registration": seen,
        "text_sha256": claim.text_sha256(),
        "code": code_hashes(m.compute.__module__ for m in lc.metrics),
        "tool": TOOL,
    }


def _compute(lc: LoadedClaim, inputs: Inputs) -> tuple[dict[str, Value], dict[str, object]]:
    values: dict[str, Value] = {}
    details: dict[str, object] = {}
    for metric in lc.metrics:
        try:
            computed = metric.compute(inputs)
        except EvidenceError as exc:
            raise UsageError(f"{lc.id}: {metric.name}: {exc}") from exc
        if set(computed.values) != set(metric.values):
            raise HarnessError(f"metric {metric.name} gave {sorted(computed.values)}")
        values.update(computed.values)
        if computed.details is not None:
            details[metric.name] = computed.details
    return values, details


def _inputs_of(inputs: Inputs) -> dict[str, object]:
    return {
        "inputs": [InputHash(path=p, sha256=h) for p, h in sorted(inputs.hashes.items())],
        "measured": dict(sorted(inputs.measured.items())),
        "runs": [
            RunInput(
                folder=r.folder,
                started_at=r.started_at,
                base_commit=r.base_commit,
                claims=list(r.claims),
            )
            for r in sorted(inputs.runs, key=lambda r: r.folder)
        ],
    }


def _says_more(lc: LoadedClaim, contestants: Mapping[str, EvidenceKind]) -> list[str]:
    """What the claim says that the runs behind it cannot, and the values its metrics want shown
    that its statement hides (claims/scope.py)."""
    claim = lc.claim
    return [
        *word_problems(claim.title, claim.statement, contestants),
        *shown_problems(claim.statement, [(m.name, m.shows) for m in lc.metrics]),
    ]


def prove_claim(claims: Claims, lc: LoadedClaim, history: History) -> tuple[Evidence, list[str]]:
    """The claim's evidence, judged by its registrations (`history`, oldest first), and the
    problems proving it found."""
    claim = lc.claim
    base = _base(lc, history)
    unbounded = [BoundResult(bound=b.text) for b in lc.bounds]

    def not_proved(why: list[str], inputs: Inputs | None) -> Evidence:
        seen = _inputs_of(inputs) if inputs is not None else {}
        fields = {"verdict": "not_proved", "why": why, "bounds": unbounded}
        return Evidence.model_validate({**base, **seen, **fields})

    if claim.status == "withdrawn":
        return Evidence.model_validate({**base, "verdict": "withdrawn", "bounds": unbounded}), []
    if not lc.evidence:
        why = [*_says_more(lc, {}), *refusals(claim, history, Inputs(claims.root, {}))]
        return not_proved(["no evidence yet", *why], None), [f"{lc.id}: {w}" for w in why]
    inputs = Inputs(claims.root, lc.evidence, dict(claim.params))
    try:
        values, details = _compute(lc, inputs)
    except Unprovable as exc:
        why = [f"the evidence cannot prove it: {exc}", *_says_more(lc, inputs.contestants)]
        why += refusals(claim, history, inputs)
        return not_proved(why, inputs), [f"{lc.id}: {w}" for w in why]
    refused = _says_more(lc, inputs.contestants)
    refused += [f"evidence refused: {r}" for r in refusals(claim, history, inputs)]
    if refused:
        return not_proved(refused, inputs), [f"{lc.id}: {r}" for r in refused]
    texts = {name: lc.values[name].render(value) for name, value in values.items()}
    bounds = [
        BoundResult(bound=b.text, value=canonical(values[b.value]), holds=b.holds(values[b.value]))
        for b in lc.bounds
    ]
    verdict: Verdict = "accepted" if all(b.holds for b in bounds) else "rejected"
    failed = [
        f"{b.text} fails: {texts[b.value]}, {_missed_by(b, values[b.value], lc.values[b.value])}"
        for b in lc.bounds
        if not b.holds(values[b.value])
    ]
    evidence = Evidence.model_validate(
        {
            **base,
            **_inputs_of(inputs),
            "verdict": verdict,
            "why": failed,
            "statement": PLACEHOLDER.sub(lambda m: texts[m.group(1)], claim.statement),
            "values": {
                n: ValueText(value=canonical(v), text=texts[n]) for n, v in sorted(values.items())
            },
            "bounds": bounds,
            "details": details,
        }
    )
    problems = []
    if claim.status != verdict:
        fix = f"set status: {verdict} in claims/claims.yaml"
        if verdict == "rejected":
            fix += " (a rejected claim stays, with its reason)"
        problems.append(
            f"{lc.id}: its evidence gives {verdict}, claims.yaml says {claim.status}: {fix}"
        )
    return evidence, problems


def _missed_by(bound: Bound, value: Value, fmt: Fmt) -> str:
    """How far `value` lies from the `bound` it fails, as the value reads: `0.05 above its
    bound` (a multiplier's difference without its x)."""
    if isinstance(value, str):
        raise HarnessError(f"bound {bound.text!r} compares a number, not {value!r}")
    diff = Fraction(value) - bound.limit
    if diff == 0:
        return "on its bound"
    shown = (fixed(fmt.places) if fmt.kind == "times" else fmt).render(float(abs(diff)))
    return f"{shown} {'above' if diff > 0 else 'below'} its bound"


def _summary(evidence: Evidence, lc: LoadedClaim) -> str:
    parts = []
    for result, bound in zip(evidence.bounds, lc.bounds, strict=True):
        if result.holds is None:
            parts.append(result.bound)
            continue
        shown = evidence.values[bound.value].text
        parts.append(
            f"{bound.value} {shown} ({result.bound} {'holds' if result.holds else 'FAILS'})"
        )
    return f"{lc.id}  {evidence.shown:<26}  " + "; ".join(parts)


def _some(items: list[str], shown: int = 3) -> str:
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def _where_code(root: Path, rel: str, module: str) -> str:
    """Where evidence file `rel` records `module`'s sha256: `rel line N`."""
    text = (root / rel).read_text(encoding="utf-8", errors="replace")
    number = line_holding(text, json.dumps(module))
    return rel if number is None else f"{rel} line {number}"


def _stale_inputs(root: Path, stored: Evidence) -> list[str]:
    stale = []
    for item in stored.inputs:
        try:
            now = hash_path(root, item.path.rstrip("/"))
        except FileNotFoundError:
            stale.append(f"{item.path} is gone")
            continue
        if now != item.sha256:
            stale.append(f"{item.path} changed")
    return stale


def prove(
    root: Path, only: list[str] | None = None, check: bool = False, allow_shallow: bool = False
) -> Proved:
    """`allow_shallow`: in a clone whose history does not reach the log's start, check the rest
    and say what was not (`Proved.unchecked`) instead of refusing (ADR 0078)."""
    claims = load_claims(root)
    log = load_log(root)
    git = GitView(root)
    start = anchor(root, git, bool(log.entries), allow_shallow)
    wanted = only or [lc.id for lc in claims.claims]
    for cid in wanted:
        if claims.get(cid) is None:
            known = ", ".join(lc.id for lc in claims.claims)
            raise UsageError(f"--claim {cid}: no such claim in claims/claims.yaml ({known})")
    readme_rel = claims.readme.path
    try:
        readme_text = (root / readme_rel).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "claims/claims.yaml", "readme.path", f"{readme_rel} does not exist"
        ) from None
    pages = pages_mod.read_pages(root)
    # Every marker, the README's and the pages', is read: exit 2 before anything is computed.
    readme_mod.markers(readme_text, claims, readme_rel)
    marked = {rel: text for rel, text in pages.items() if pages_mod.holds_markers(text)}
    for rel, text in marked.items():
        readme_mod.markers(text, claims, rel)
    done = Proved(claims, {}, {}, unchecked=list(start.unchecked))
    for lc in claims.claims:
        rel = evidence_path(lc.id)
        if lc.id not in wanted:
            try:
                stored = read_evidence(root / rel, rel)
            except ConfigError as exc:
                done.problems.append(f"{lc.id}: {exc}: run ssw prove --claim {lc.id}")
                continue
            if stored is None:
                done.problems.append(
                    f"{lc.id}: {rel} does not exist: run ssw prove --claim {lc.id}"
                )
                continue
            done.evidence[lc.id] = stored
            continue
        try:
            stored = read_evidence(root / rel, rel)
        except ConfigError:
            stored = None  # an edited evidence file: the comparison below reports it
        if check:
            for stale in _stale_inputs(root, stored) if stored is not None else ():
                done.problems.append(f"{lc.id}: {stale} since {rel} was written")
        evidence, problems = prove_claim(claims, lc, log.of(lc.id))
        if lc.claim.status == "withdrawn":
            problems = [*problems, *withdrawal_problems(root, lc.claim, rel, git)]
        recoded = changed_code(stored.code, evidence.code) if stored and stored.code else []
        if check and recoded:
            done.problems.append(
                f"{lc.id}: the code that computes or judges it changed since {rel} was written "
                f"({_some(recoded)}; {_where_code(root, rel, recoded[0])}): run ssw prove "
                f"--claim {lc.id} (it proves it again from the raw samples)"
            )
        # What was measured before, kept in the file and in git's history of it (ADR 0016).
        earlier = earlier_measurements(git, rel, stored, evidence)
        evidence = evidence.model_copy(update={"earlier": earlier})
        done.evidence[lc.id] = evidence
        done.problems += problems
        done.files[rel] = dump_evidence(evidence)
        again = f"  (proved again by changed code: {_some(recoded)})" if recoded else ""
        done.lines.append(_summary(evidence, lc) + again)
    ids = {lc.id for lc in claims.claims}
    for path in sorted((root / EVIDENCE_DIR).glob("*.json")):
        if path.stem not in ids:
            done.problems.append(
                f"{EVIDENCE_DIR}/{path.name} has no claim in claims.yaml: a claim is withdrawn "
                "(status: withdrawn, reason, adr), never deleted"
            )
    done.problems += log_problems(git, log, ids, start)
    if len(done.evidence) == len(claims.claims):
        notes = {lc.id: bound_notes(log.of(lc.id)) for lc in claims.claims}
        rendered = readme_mod.render(readme_text, done.evidence, readme_rel, notes)
        done.files[readme_rel] = rendered
        shown_pages = {
            rel: readme_mod.render(t, done.evidence, rel, notes) for rel, t in marked.items()
        }
        done.files.update(shown_pages)
        # Every Markdown file shipped, the README and the pages as rendered (ADR 0077).
        shown = {readme_rel: rendered, **shown_pages}
        inputs = [p for lc in claims.claims for paths in lc.evidence.values() for p in paths]
        shipped = shipped_markdown(root, inputs)
        linted = {rel: shown.get(rel, text) for rel, text in shipped.items()}
        linted = {readme_rel: rendered, **linted}
        done.problems += lint_mod.lint_pages(linted, claims, git)
        done.problems += source_problems(root, claims.readme.allow)
        in_readme = readme_mod.shown_claims(rendered)
        for lc in claims.claims:
            if "*" not in in_readme and lc.id not in in_readme:
                done.problems.append(
                    f"{lc.id} is not shown in {readme_rel}: add a <!-- claim {lc.id} --> marker or "
                    "a <!-- claims-index --> (a claim is never dropped from the README)"
                )
    # The recorded runs of docs/runs, hashed as evidence is (claims/runs_record.py).
    runs = runs_record.runs_files(root)
    if runs or (root / runs_record.RECORD).exists():
        done.files[runs_record.RECORD] = runs_record.record_text(runs)
    if check:
        done.problems += runs_record.runs_problems(root, runs)
    for rel, text in sorted(done.files.items()):
        path = root / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            done.changed.append(rel)
            if rel == runs_record.RECORD:
                continue  # its problems name the run's file and line, above
            if check and (rel == readme_rel or rel in marked) and path.exists():
                on_disk = path.read_text(encoding="utf-8")
                done.problems += readme_mod.differences(on_disk, text, rel)
            elif check:
                done.problems.append(f"{rel} would change: run ssw prove and commit the result")
    return done


def write(root: Path, done: Proved) -> None:
    (root / EVIDENCE_DIR).mkdir(parents=True, exist_ok=True)
    for rel in done.changed:
        path = root / rel
        staged = path.with_name(path.name + ".tmp")
        staged.write_text(done.files[rel], encoding="utf-8", newline="\n")
        staged.replace(path)


__all__ = ["Proved", "evidence_path", "load_claims", "prove", "prove_claim", "write"]
