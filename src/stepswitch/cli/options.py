"""Options that several commands declare alike, each written once; kept free of heavy imports so
`ssw --help` stays fast."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# `ssw ledger` and `ssw site`: the ledger they read, found as every command finds it.
LedgerFileOption = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        help="The SQLite ledger (default: $SSW_LEDGER, else .ssw/ledger.sqlite).",
    ),
]

# A listing as a table, or the same rows as JSON.
JsonTableOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
