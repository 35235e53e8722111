"""A claim's earlier measurements (ADR 0016, issue 23).

A claim measured again until it passes would otherwise show only its last measurement. Its
evidence file keeps the earlier ones (`earlier`), and `ssw prove` adds to them: the evidence it
replaces, when that came from other inputs, and every committed version of the file in git's
history that accepted or rejected the claim. A measurement is known by its inputs' sha256, so a
version proved again from the same inputs (a reworded statement, a new field) is the same one.
So an entry removed from the file comes back, and `ssw prove --check` fails until it does,
wherever git's history holds it; a shallow clone is refused (ADR 0078), and in a copy without
git only the file keeps them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import ValidationError

from stepswitch.claims.evidence import EarlierMeasurement, Evidence
from stepswitch.claims.git_view import GitView

MEASURED = ("accepted", "rejected")


def inputs_key(inputs: object) -> str | None:
    """The sha256 of a measurement's inputs (path and sha256 of each, sorted); None when
    `inputs` is not a list of them."""
    if not isinstance(inputs, list) or not inputs:
        return None
    lines = []
    for item in inputs:
        if not isinstance(item, dict):
            return None
        lines.append(f"{item.get('path')} {item.get('sha256')}")
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def _figures(data: dict[str, Any]) -> list[str]:
    """Each bound's value as that version showed it: `name text`."""
    values = data.get("values") if isinstance(data.get("values"), dict) else {}
    shown = []
    for bound in data.get("bounds") or []:
        if not isinstance(bound, dict) or bound.get("value") is None:
            continue
        name = str(bound.get("bound", "")).split(" ", 1)[0]
        value = values.get(name) if isinstance(values, dict) else None
        text = value.get("text") if isinstance(value, dict) else None
        shown.append(f"{name} {text if text is not None else bound['value']}")
    return list(dict.fromkeys(shown))


def measurement_of(data: object, commit: str, git: GitView | None) -> EarlierMeasurement | None:
    """The measurement an evidence file's data records; None when it records none (not proved,
    withdrawn, or not evidence at all)."""
    if not isinstance(data, dict) or data.get("verdict") not in MEASURED:
        return None
    key = inputs_key(data.get("inputs"))
    if key is None:
        return None
    measured = data.get("measured")
    dates = sorted(str(v) for v in measured.values()) if isinstance(measured, dict) else []
    when = dates[-1][:10] if dates else ""
    if not when and git is not None and commit:
        committed = git.committed_at(commit)
        when = committed.date().isoformat() if committed is not None else ""
    try:
        return EarlierMeasurement(
            inputs_sha256=key,
            commit=commit,
            verdict=data["verdict"],
            measured_on=when or "an unknown date",
            figures=_figures(data),
        )
    except ValidationError:
        return None


def earlier_measurements(
    git: GitView, rel: str, stored: Evidence | None, current: Evidence
) -> list[EarlierMeasurement]:
    """`current`'s earlier measurements: those `stored` (the file it replaces) kept, `stored`
    itself, and the committed versions of `rel`; without `current`'s own, oldest first."""
    today = inputs_key([i.model_dump() for i in current.inputs])
    found: dict[str, EarlierMeasurement] = {}

    def add(measurement: EarlierMeasurement | None) -> None:
        if measurement is None or measurement.inputs_sha256 == today:
            return
        known = found.get(measurement.inputs_sha256)
        if known is None or (measurement.commit and not known.commit):
            found[measurement.inputs_sha256] = measurement  # the committed one names its commit

    for commit, text in reversed(git.versions(rel)):  # oldest first: the first commit wins
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            continue  # a version that is not JSON measured nothing
        measurement = measurement_of(data, commit, git)
        if measurement is not None and measurement.inputs_sha256 not in found:
            add(measurement)
    if stored is not None:
        for kept in stored.earlier:
            add(kept)
        add(measurement_of(stored.model_dump(mode="json"), "", None))
    return sorted(found.values(), key=lambda e: (e.measured_on, e.commit, e.inputs_sha256))
