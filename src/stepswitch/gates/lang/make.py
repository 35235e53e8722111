"""make: detection and runner (to be built; see gates/lang/base.py for the contract)."""

from __future__ import annotations

from pathlib import Path

from stepswitch.gates.lang.base import Detection

LANGUAGE = "make"


def detect(root: Path) -> Detection:
    """Nothing detected yet."""
    return Detection(LANGUAGE)
