"""claims/evidence/<id>.json: what `ssw prove` computed for one claim, from which inputs (with
their sha256), against which bounds, by which version of ssw. Written byte-identically on every
run: sorted keys, numbers as fixed text, no timestamps, LF line ends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from stepswitch.errors import ConfigError
from stepswitch.util.config_model import Strict
from stepswitch.util.text import escape_json_controls

SCHEMA_VERSION = 1
Verdict = Literal["accepted", "rejected", "not_proved", "withdrawn"]


class InputHash(Strict):
    path: str  # relative to the repository; a folder ends with "/"
    sha256: str


class ValueText(Strict):
    value: int | str  # ints as ints, floats as 12 significant digits, text as text
    text: str  # as the README shows it


class BoundResult(Strict):
    bound: str
    value: int | str | None = None  # None: not proved, nothing to compare
    holds: bool | None = None


class RunInput(Strict):
    folder: str
    started_at: str
    base_commit: str
    claims: list[str]


class RegistrationSeen(Strict):
    commit: str
    date: str
    text_sha256: str


class EarlierMeasurement(Strict):
    """A measurement of the claim before this one (claims/history.py): from other inputs."""

    inputs_sha256: str  # of its inputs' paths and sha256: the same inputs are one measurement
    commit: str  # the first commit whose evidence file held it; "" when never committed
    verdict: Literal["accepted", "rejected"]
    measured_on: str
    figures: list[str] = Field(default_factory=list)  # each bound's value, as it was shown

    def note(self) -> str:
        figures = f" ({'; '.join(self.figures)})" if self.figures else ""
        where = f"at commit {self.commit[:12]}" if self.commit else "never committed"
        return f"measured before: {self.verdict} on {self.measured_on}{figures}, evidence {where}"


class Evidence(Strict):
    schema_version: int = SCHEMA_VERSION
    claim: str
    title: str
    status: str  # as claims.yaml declares it
    verdict: Verdict  # what the evidence gives
    why: list[str] = Field(default_factory=list)  # not_proved: why; rejected: the failed bounds
    statement: str | None = None  # rendered with the values; None when not proved
    values: dict[str, ValueText] = Field(default_factory=dict)
    bounds: list[BoundResult] = Field(default_factory=list)
    bounds_set_by: str
    retrospective: str | None = None
    reason: str | None = None
    adr: str | None = None
    metrics: list[str]
    inputs: list[InputHash] = Field(default_factory=list)
    measured: dict[str, str] = Field(default_factory=dict)
    runs: list[RunInput] = Field(default_factory=list)
    registration: RegistrationSeen | None = None
    text_sha256: str
    details: dict[str, Any] = Field(default_factory=dict)
    earlier: list[EarlierMeasurement] = Field(default_factory=list)
    # The code that computed and judged it: `stepswitch/<path>` -> sha256 (claims/code.py).
    code: dict[str, str] = Field(default_factory=dict)
    tool: dict[str, str]

    @property
    def shown(self) -> str:
        """The claim's state as the README says it."""
        if self.verdict == "not_proved":
            if self.status in ("accepted", "rejected"):
                # claims.yaml declares a verdict the evidence no longer gives: say both
                return f"not proved, though claims.yaml says {self.status}"
            return "registered, not yet proved"
        return self.verdict


def dump_evidence(evidence: Evidence) -> str:
    data = evidence.model_dump(mode="json")
    return (
        escape_json_controls(json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False)) + "\n"
    )


def read_evidence(path: Path, rel: str) -> Evidence | None:
    """The evidence file at `path`; None when there is none; a malformed one is exit 2."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return Evidence.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(
            rel, "(file)", f"not an evidence file: {str(exc).splitlines()[0]}"
        ) from None
