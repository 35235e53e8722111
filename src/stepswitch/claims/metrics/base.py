"""A metric: a named function of committed evidence that returns named values. Claims name
metrics; they never carry code. Each metric says up front which evidence roles it reads and which
values it gives, so a claim is checked before anything is computed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stepswitch.claims.inputs import Inputs
from stepswitch.claims.numbers import Fmt, Value


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
