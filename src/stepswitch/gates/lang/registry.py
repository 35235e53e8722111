"""A runner by the name a SuiteGate gives (imported only when a gate uses it), and the languages'
detections in the order they are tried."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from stepswitch.gates.config import RunnerName
from stepswitch.gates.lang.base import Detection, Runner

# runner name -> "module:attribute" of the Runner
_RUNNERS: dict[str, str] = {
    "node-test": "stepswitch.gates.lang.node:NODE_TEST",
    "jest": "stepswitch.gates.lang.node:JEST",
    "vitest": "stepswitch.gates.lang.node:VITEST",
    "mocha": "stepswitch.gates.lang.node:MOCHA",
    "cargo": "stepswitch.gates.lang.cargo:CARGO",
    "go": "stepswitch.gates.lang.go:GO",
    "make": "stepswitch.gates.lang.make:MAKE",
}

# Each language's `detect(root) -> Detection`, tried in this order; make's only when no other
# language found a test gate.
DETECTORS: tuple[str, ...] = (
    "stepswitch.gates.lang.node:detect",
    "stepswitch.gates.lang.cargo:detect",
    "stepswitch.gates.lang.go:detect",
)
FALLBACK_DETECTOR = "stepswitch.gates.lang.make:detect"


def _load(target: str) -> object:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def runner(name: RunnerName) -> Runner:
    found = _load(_RUNNERS[name])
    return found  # type: ignore[return-value]


def detector(target: str) -> Callable[[Path], Detection]:
    return _load(target)  # type: ignore[return-value]
