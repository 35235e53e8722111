"""Pre-registration: `ssw claims register ID` appends the claim's text hash, the current commit,
the time and the bounds it fixes to claims/registrations.yaml, an append-only log, before any run
it depends on. Each entry chains to the one before it by sha256, and `ssw prove` compares the log
with git's history of the file, so an earlier entry cannot be edited or removed unseen. Evidence
that started before the registration, was made for another claim, or was measured before the
registration whose bounds it is judged by, is refused for the claim (refusals.py; ADR 0016,
issue 23)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stepswitch.claims.anchor import load_anchor, write_anchor
from stepswitch.claims.git_view import head_commit, parse_time
from stepswitch.claims.model import Claim, ClaimId
from stepswitch.errors import ConfigError, UsageError

REGISTRATIONS_FILE = "claims/registrations.yaml"
HEADER = (
    "# Written by `ssw claims register ID`, an append-only log: each registration of each claim\n"
    "# (its text hash, the commit, the time, the bounds it fixes), chained to the entry before it\n"
    "# by sha256. Never edit or remove an entry: ssw prove --check compares the log with git's\n"
    "# history of this file. docs/decisions/0016-claims-engine.md (issue 23).\n"
)
NEVER_DELETED = "a claim is withdrawn (status: withdrawn, reason, adr), never deleted"
APPEND_ONLY = "the log is append-only: an entry is never edited or removed"
Hex64 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", strict=True)]
Text = Annotated[str, Field(min_length=1, strict=True)]


class Registration(BaseModel):
    """One entry of the log: one registration of one claim."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    claim: ClaimId
    text_sha256: Hex64
    commit: Annotated[str, Field(pattern=r"^[0-9a-f]{40}$", strict=True)]
    date: Annotated[str, Field(strict=True)]  # ISO 8601 with its UTC offset, to the second
    bounds: list[Text] = Field(min_length=1)  # as the claim had them when registered
    bounds_set_by: Text
    retrospective: Text | None = None  # as the claim had it (kept only from the first entry)
    previous: Hex64 | None = None  # sha256 of the entry before it; None for the first
    # What the claim ranges over (Claim.ranges_sha256), recorded from ADR 0078 on when the claim
    # names its evidence; an entry without one fixes no range (its hash leaves the field out).
    ranges_sha256: Hex64 | None = None

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

    def _fields(self) -> dict[str, Any]:
        """The entry as JSON; without ranges_sha256 when it has none, as entries were written
        before the field was (their hashes stay what they were)."""
        data = self.model_dump(mode="json")
        if self.ranges_sha256 is None:
            del data["ranges_sha256"]
        return data

    def sha256(self) -> str:
        """What the next entry's `previous` names: the entry, as canonical JSON."""
        text = json.dumps(self._fields(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def content(self) -> str:
        """The entry without its link: what a later version of the log must still hold."""
        data = self._fields()
        del data["previous"]
        return json.dumps(data, sort_keys=True)

    def keeps(self, claim: Claim) -> bool:
        """Whether this registration still covers `claim`: its text, and its ranges where it
        recorded them."""
        if self.text_sha256 != claim.text_sha256():
            return False
        return self.ranges_sha256 is None or self.ranges_sha256 == claim.ranges_sha256()


class RegistrationsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[2] = 2
    log: list[Registration] = Field(default_factory=list)


@dataclass(frozen=True)
class Log:
    """The entries in file order, with the line each starts on."""

    entries: tuple[Registration, ...] = ()
    lines: tuple[int, ...] = ()

    def of(self, claim_id: str) -> History:
        found = [
            (e, n) for e, n in zip(self.entries, self.lines, strict=True) if e.claim == claim_id
        ]
        return History(tuple(e for e, _ in found), tuple(n for _, n in found))

    def latest(self) -> dict[str, Registration]:
        return {e.claim: e for e in self.entries}


@dataclass(frozen=True)
class History:
    """One claim's registrations, oldest first, and their lines in the log."""

    entries: tuple[Registration, ...] = ()
    lines: tuple[int, ...] = ()

    @property
    def latest(self) -> Registration | None:
        return self.entries[-1] if self.entries else None

    def bounds_from(self) -> int:
        """The index of the registration that set the latest bounds: the first of the latest
        run of entries with those bounds (bounds changed and changed back count from then)."""
        at = len(self.entries) - 1
        while at > 0 and self.entries[at - 1].bounds == self.entries[at].bounds:
            at -= 1
        return at

    def bound_changes(self) -> list[tuple[Registration, Registration]]:
        """(before, after) for each registration that changed the bounds."""
        pairs = zip(self.entries, self.entries[1:], strict=False)
        return [(a, b) for a, b in pairs if a.bounds != b.bounds]


def bounds_text(bounds: Sequence[str]) -> str:
    return "; ".join(bounds)


def bound_notes(history: History) -> list[str]:
    """What the README shows next to a claim whose bounds changed after its first registration."""
    return [
        f"bounds changed on {b.date[:10]} from {bounds_text(a.bounds)} to {bounds_text(b.bounds)}"
        for a, b in history.bound_changes()
    ]


def _entry_lines(text: str) -> list[int]:
    """The line each entry of `log:` starts on (1-based)."""
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    node = yaml.compose(text, Loader=loader)
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if getattr(key, "value", None) == "log" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def parse_log(text: str, name: str = REGISTRATIONS_FILE) -> Log:
    """The log in `text`; a malformed one is a ConfigError naming the entry and the key."""
    from stepswitch.claims.yamlio import parse_yaml
    from stepswitch.util.config_model import first_error

    raw = parse_yaml(text, name) or {}
    if isinstance(raw, dict) and raw.get("schema_version") == 1:
        raise ConfigError(
            name,
            "schema_version",
            "is 1, one registration per claim, rewritten in place; the log is schema_version 2",
            "restore it from git, or migrate it (docs/decisions/0016-claims-engine.md)",
        )
    lines = _entry_lines(text)
    try:
        entries = tuple(RegistrationsFile.model_validate(raw).log)
    except ValidationError as exc:
        first = first_error(exc)
        loc = list(first["loc"])
        where = ".".join(str(p) for p in loc) or "(file)"
        if len(loc) >= 2 and loc[0] == "log" and isinstance(loc[1], int) and loc[1] < len(lines):
            item = raw["log"][loc[1]]
            claim = item.get("claim") if isinstance(item, dict) else None
            where = f"line {lines[loc[1]]} ({claim or f'entry {loc[1]}'})"
            where += "".join(f".{p}" for p in loc[2:])
        raise ConfigError(name, where, first["msg"]) from None
    if len(lines) != len(entries):
        lines = [0] * len(entries)
    return Log(entries, tuple(lines))


def load_log(root: Path) -> Log:
    from stepswitch.util.inputs import read_text_input

    path = root / REGISTRATIONS_FILE
    if not path.exists():
        return Log()
    fix = f"restore {REGISTRATIONS_FILE} from git"
    return parse_log(read_text_input(path, "registrations file", fix))


def load_registrations(root: Path) -> dict[str, Registration]:
    """Each registered claim's latest registration."""
    return load_log(root).latest()


def dump_log(entries: Sequence[Registration]) -> str:
    from stepswitch.claims.yamlio import dump_yaml

    data = RegistrationsFile(log=list(entries)).model_dump(mode="json", exclude_none=True)
    return HEADER + dump_yaml(data)


def write_log(root: Path, entries: Sequence[Registration]) -> None:
    path = root / REGISTRATIONS_FILE
    staged = path.with_suffix(".yaml.tmp")
    staged.write_text(dump_log(entries), encoding="utf-8", newline="\n")
    staged.replace(path)


def _registrable(claim: Claim, history: History) -> None:
    """Refuse (exit 2) a re-registration that would launder the claim."""
    first, latest = history.entries[0], history.entries[-1]
    cid = claim.id
    if claim.retrospective is not None and claim.retrospective != first.retrospective:
        raise UsageError(
            f"{cid}: its retrospective is not the one its first registration recorded "
            f"({first.date}): a retrospective is allowed only at a claim's first registration"
        )
    if list(claim.bounds) != latest.bounds and claim.bounds_set_by == latest.bounds_set_by:
        raise UsageError(
            f"{cid}: its bounds change (from {bounds_text(latest.bounds)} to "
            f"{bounds_text(claim.bounds)}) but bounds_set_by does not: say where the new bounds "
            "were decided"
        )


def register(
    root: Path, claim: Claim, now: datetime | None = None
) -> tuple[Registration, Registration | None]:
    """Append a registration of `claim` now at HEAD; returns the new and the previous one. A claim
    whose text is unchanged since its latest registration keeps it (evidence stays valid)."""
    log = load_log(root)
    history = log.of(claim.id)
    before = history.latest
    if before is not None:
        _registrable(claim, history)
        # An entry from before ranges were registered keeps the text only: registering again
        # fixes what the claim ranges over.
        if before.keeps(claim) and (before.ranges_sha256 is not None or not claim.evidence):
            return before, before
    when = (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds")
    made = Registration(
        claim=claim.id,
        text_sha256=claim.text_sha256(),
        commit=head_commit(root),
        date=when,
        bounds=list(claim.bounds),
        bounds_set_by=claim.bounds_set_by,
        retrospective=claim.retrospective,  # a re-registration's: its first's or none
        previous=log.entries[-1].sha256() if log.entries else None,
        # A claim registered with no evidence map fixes no range: its first evidence is then
        # what it ranges over; one that names its evidence to come fixes it now (ADR 0078).
        ranges_sha256=claim.ranges_sha256() if claim.evidence else None,
    )
    if not log.entries and load_anchor(root) is None:
        write_anchor(root, made.commit)  # the log starts here (ADR 0078)
    write_log(root, [*log.entries, made])
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
    if not made.keeps(loaded.claim):
        what = "text" if made.text_sha256 != loaded.claim.text_sha256() else "evidence"
        raise UsageError(
            f"--claim {claim_id}: its {what} changed since it was registered on {made.date}; "
            f"run `ssw claims register {claim_id}` again before the run"
        )
    return made


__all__ = [
    "APPEND_ONLY",
    "HEADER",
    "NEVER_DELETED",
    "REGISTRATIONS_FILE",
    "History",
    "Log",
    "Registration",
    "RegistrationsFile",
    "bound_notes",
    "bounds_text",
    "dump_log",
    "head_commit",
    "load_log",
    "load_registrations",
    "parse_log",
    "parse_time",
    "register",
    "registered_claim",
    "write_log",
]
