"""A metric: a named function of committed evidence that returns named values. Claims name
metrics; they never carry code. Each metric says up front which evidence roles it reads and which
values it gives, so a claim is checked before anything is computed; and which kinds of contestant
its evidence may come from (`evidence`, claims/scope.py), so a claim cannot say more than its
evidence can (docs/decisions/0027-what-evidence-can-say.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stepswitch.claims.inputs import Inputs, Unprovable
from stepswitch.claims.numbers import Fmt, Value
from stepswitch.claims.scope import EvidenceKind


@dataclass(frozen=True)
class Computed:
    values: dict[str, Value]
    details: Any = None  # a JSON-able table for the evidence file (e.g. each fixture's dollars)


@dataclass(frozen=True)
class Metric:
    name: str  # "<reader>.<what>", e.g. "perf.overhead"
    reads: tuple[str, ...]  # the evidence roles it reads, e.g. ("results",)
    values: Mapping[str, Fmt]
    compute: Callable[[Inputs], Computed]
    doc: str = ""
    params: tuple[str, ...] = field(default=())  # names of the claim's `params` it needs
    # The kinds of contestant whose runs its evidence may come from, each noted as it is read
    # (`Inputs.contestant`); empty: it reads no contestant's runs (a measurement, a table).
    evidence: frozenset[EvidenceKind] = field(default=frozenset())
    shows: tuple[str, ...] = field(default=())  # values a claim's statement must show


def note_contestants(inputs: Inputs, metric: Metric, kinds: Mapping[str, EvidenceKind]) -> None:
    """`kinds` (whose runs -> what they are) noted for the claim's words; Unprovable when one is
    of a kind the metric's evidence may not come from."""
    allowed = ", ".join(sorted(metric.evidence)) or "no"
    wrong = [
        f"{who} is {kind}" for who, kind in sorted(kinds.items()) if kind not in metric.evidence
    ]
    if wrong:
        raise Unprovable(f"{metric.name} reads runs of {allowed} contestants; {', '.join(wrong)}")
    for who, kind in kinds.items():
        inputs.contestant(who, kind)
