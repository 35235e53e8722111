"""Pre-registration: `ssw claims register ID` records a claim's text hash, the current commit and
the time in claims/registrations.yaml before any run it depends on. Evidence that started before
the registration, or was made for another claim, is refused for the claim."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stepswitch.claims.inputs import Inputs
from stepswitch.claims.model import Claim, ClaimId
from stepswitch.errors import ConfigError, UsageError
from stepswitch.util.git import run_git

REGISTRATIONS_FILE = "claims/registrations.yaml"
HEADER = (
    "# Written by `ssw claims register ID`: the claim's text hash, the commit and the time it was\n"
    "# registered, before any run it depends on. ssw prove refuses evidence that started earlier.\n"
)


class Registration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", strict=True)]
    commit: Annotated[str, Field(pattern=r"^[0-9a-f]{40}$", strict=True)]
    date: Annotated[str, Field(strict=True)]  # ISO 8601 with its UTC offset, to the second

    @field_validator("date")
    @classmethod
    def _dated(cls, value: str) -> str:
        when = datetime.fromisoformat(value)  # ValueError: pydantic reports it
        if when.tzinfo is None:
            raise ValueError("has no UTC offset, e.g. 2026-12-01T09:00:00+00:00")
        return value

    @property
    def when(self) -> datetime:
        return datetime.fromisoformat(self.date)


class RegistrationsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    registrations: dict[ClaimId, Registration] = Field(default_factory=dict)


def load_registrations(root: Path) -> dict[str, Registration]:
    from stepswitch.claims.yamlio import parse_yaml
    from stepswitch.util.inputs import read_text_input

    path = root / REGISTRATIONS_FILE
    if not path.exists():
        return {}
    fix = f"restore {REGISTRATIONS_FILE} from git"
    raw = parse_yaml(read_text_input(path, "registrations file", fix), REGISTRATIONS_FILE)
    try:
        return dict(RegistrationsFile.model_validate(raw or {}).registrations)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(file)"
        raise ConfigError(REGISTRATIONS_FILE, where, first["msg"]) from None


def write_registrations(root: Path, registrations: dict[str, Registration]) -> None:
    from stepswitch.claims.yamlio import dump_yaml

    data = RegistrationsFile(registrations=registrations).model_dump(mode="json")
    path = root / REGISTRATIONS_FILE
    staged = path.with_suffix(".yaml.tmp")
    staged.write_text(HEADER + dump_yaml(data), encoding="utf-8", newline="\n")
    staged.replace(path)


def _git(root: Path, *args: str) -> str | None:
    """git's stdout, or None when git cannot answer (no git, not a repository, unknown object)."""
    try:
        done = run_git(root, *args, user_config=True)
    except UsageError:
        return None
    return done.out.strip() if done.status == 0 else None


def head_commit(root: Path) -> str:
    commit = _git(root, "rev-parse", "--verify", "HEAD")
    if commit is None:
        raise UsageError(f"{root} has no git commit to register claims against: commit first")
    return commit


def register(
    root: Path, claim: Claim, now: datetime | None = None
) -> tuple[Registration, Registration | None]:
    """Record `claim` as registered now at HEAD; returns the new and the previous registration.
    A claim whose text is unchanged since its registration keeps it (evidence stays valid)."""
    registrations = load_registrations(root)
    before = registrations.get(claim.id)
    if before is not None and before.text_sha256 == claim.text_sha256():
        return before, before
    when = (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")
    made = Registration(text_sha256=claim.text_sha256(), commit=head_commit(root), date=when)
    registrations[claim.id] = made
    write_registrations(root, dict(sorted(registrations.items())))
    return made, before


def registered_claim(root: Path, claim_id: str) -> Registration:
    """For `ssw bench run --claim ID`: the claim's registration, refusing (exit 2) a claim that
    is not in claims.yaml, not registered, or changed since. The runner then records the id in
    the bench's run.json (`claims: [ID]`), and only those claims may use the run."""
    from stepswitch.claims.model import load_claims

    loaded = load_claims(root).get(claim_id)
    if loaded is None:
        raise UsageError(f"--claim {claim_id}: no such claim in claims/claims.yaml")
    made = load_registrations(root).get(claim_id)
    if made is None:
        raise UsageError(
            f"--claim {claim_id}: not registered; run `ssw claims register {claim_id}` first"
        )
    if made.text_sha256 != loaded.claim.text_sha256():
        raise UsageError(
            f"--claim {claim_id}: its text changed since it was registered on {made.date}; "
            f"run `ssw claims register {claim_id}` again before the run"
        )
    return made


def parse_time(text: str) -> datetime | None:
    """An ISO date or date-time; a date alone is its first second (the earliest it can have
    been), a time without an offset is UTC. None when it is neither."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@functools.lru_cache(maxsize=256)
def _answer(root: Path, *args: str) -> str | None:
    """git's answer about objects, which never changes once given (kept for the process)."""
    return _git(root, *args)


@dataclass(frozen=True)
class GitView:
    """What git can tell about commits; None answers mean it cannot tell (no git, a shallow
    clone), and then nothing is refused on its account."""

    root: Path

    def exists(self, commit: str) -> bool | None:
        if _answer(self.root, "cat-file", "-e", f"{commit}^{{commit}}") is not None:
            return True
        if _git(self.root, "rev-parse", "--git-dir") is None:
            return None
        shallow = _git(self.root, "rev-parse", "--is-shallow-repository")
        return None if shallow == "true" else False

    def committed_at(self, commit: str) -> datetime | None:
        text = _answer(self.root, "show", "-s", "--format=%cI", commit)
        return None if text is None else parse_time(text)

    def is_ancestor(self, older: str, newer: str) -> bool | None:
        if not (self.exists(older) and self.exists(newer)):
            return None
        found = _answer(self.root, "merge-base", "--is-ancestor", older, newer)
        return found is not None


def refusals(claim: Claim, registration: Registration | None, inputs: Inputs) -> list[str]:
    """Why this claim's evidence may not prove it; empty when it may."""
    cid = claim.id
    if registration is None:
        return [f"not registered (ssw claims register {cid}, before its runs)"]
    found = []
    if registration.text_sha256 != claim.text_sha256():
        found.append(
            f"its text changed since it was registered on {registration.date}: register it again "
            f"(ssw claims register {cid}); evidence from before that is then refused"
        )
    git = GitView(inputs.root)
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
    for path, why in sorted(inputs.undated.items()):
        found.append(f"{path} cannot show it was made after {cid} was registered: {why}")
    for path, when in sorted(inputs.measured.items()):
        measured = parse_time(when)
        if measured is None:
            found.append(f"{path}: its date {when!r} is not a date")
        elif measured < registration.when and claim.retrospective is None:
            found.append(
                f"{path} was measured on {when}, before {cid} was registered "
                f"({registration.date}); a claim registered after its measurement must say why "
                "its bounds were fixed before it (retrospective)"
            )
    return found
