"""`--trust-endpoint HOST`, the same option on every command that sends a provider key
(registry/trust.py); kept free of heavy imports so `ssw --help` stays fast."""

from __future__ import annotations

from typing import Annotated

import typer

TrustEndpoints = Annotated[
    list[str] | None,
    typer.Option(
        "--trust-endpoint",
        metavar="HOST",
        help="Let this host receive your provider key although no shipped preset sends that key "
        "there: your local server or gateway (repeatable; ADR 0048).",
    ),
]
