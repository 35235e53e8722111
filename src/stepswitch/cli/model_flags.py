"""`ssw run`'s --base-url and --price-usd-per-mtok: any model on any endpoint (ADR 0061). Kept
free of heavy imports so `ssw --help` stays fast."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from stepswitch.registry.presets import Price

BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="With --model: send its calls here instead of to the preset's address (a gateway, "
        "a proxy, a server of your own) in the preset's wire format with its key; the host of a "
        "URL you type is trusted with that key (ADR 0048). Prices come from that host's list.",
    ),
]
PriceOption = Annotated[
    str | None,
    typer.Option(
        "--price-usd-per-mtok",
        metavar="IN,OUT",
        help="Bill the model's calls at IN and OUT US dollars per million input and output "
        "tokens (a run of one model: --model), whatever the preset or a price list says.",
    ),
]


def given_price(value: str | None) -> Price | None:
    """--price-usd-per-mtok as a price dated today, or None when not given."""
    if value is None:
        return None
    from datetime import date

    from stepswitch.agent.worker_prices import given_price as parse

    return parse(value, date.today())
