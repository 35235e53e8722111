"""The ledger's dollars on recorded payloads, against dollars worked out by hand.

claims/pricing_hand_computed.yaml has one row per recorded payload (tests/fixtures/<format>/): the
registry price it is billed at, the token counts read off the payload by hand with the provider's
billing rule, the arithmetic, and the dollars. For each row this metric checks that
- the row's rates are the registry's list price (with the ledger's fallbacks written out),
- the row's own arithmetic gives its dollars, exactly, in decimal,
- the wire codec's usage for the payload has the row's token counts, and
- `ledger.pricing.cost_usd` of that usage is the row's dollars."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from stepswitch.claims.inputs import EvidenceError, Inputs
from stepswitch.claims.metrics.base import Computed, Metric
from stepswitch.claims.numbers import INT, TEXT
from stepswitch.util.config_model import Strict, first_problem

DecimalText = Annotated[str, Field(pattern=r"^\d+(\.\d+)?$", strict=True)]
Count = Annotated[int, Field(ge=0, strict=True)]
TOLERANCE_USD = 1e-12  # float against exact decimal dollars: far below a millionth of a cent
PER_MILLION = Decimal(1_000_000)


class Tokens(Strict):
    uncached: Count  # input tokens billed at the input rate
    cached: Count = 0  # read from the provider's cache
    cache_write: Count = 0  # written to it, where that is billed apart
    output: Count  # reasoning included
    reasoning: Count = 0  # of which reasoning, as the payload reports it


class Rates(Strict):
    """$ per million tokens, as billed: a rate the registry leaves out is the ledger's fallback."""

    input: DecimalText
    cached_input: DecimalText
    cache_write: DecimalText
    output: DecimalText


class Row(Strict):
    fixture: str
    wire_format: Literal["chat-completions", "responses", "messages", "generate-content"]
    provider: str
    model: str
    rule: str = Field(min_length=1)  # the provider's billing rule this row applies
    rule_source: str = Field(min_length=1)  # the page that states it
    tokens: Tokens
    rates: Rates
    arithmetic: str = Field(min_length=1)  # for people: the sum, written out
    usd: DecimalText


class HandTable(Strict):
    schema_version: Literal[1] = 1
    rows: list[Row] = Field(min_length=1)


def _usage(inputs: Inputs, row: Row) -> Any:
    from stepswitch.wire.open import codec_for
    from stepswitch.wire.sse import read_events

    codec = codec_for(row.wire_format)
    if row.fixture.endswith(".sse"):
        lines = inputs.text(row.fixture).splitlines(keepends=True)
        completion = codec.decode_stream(read_events(lines), None)
    else:
        body = inputs.json(row.fixture)
        body.pop("_source", None)
        completion = codec.decode(body, None)
    if completion.usage is None:
        raise EvidenceError(f"{row.fixture} reports no usage: it cannot be billed")
    return completion.usage


def _price(inputs: Inputs, row: Row) -> Any:
    from stepswitch.registry.presets import Price, parse_preset

    rel = f"registry/providers/{row.provider}.toml"
    inputs.read_bytes(rel)
    spec = parse_preset(inputs.root / rel)
    model = spec.models.get(row.model)
    if model is None or not isinstance(model.price, Price):
        raise EvidenceError(f"{rel}: {row.model} has no list price")
    return model.price


def _rate(value: float | None, fallback: float) -> Decimal:
    return Decimal(repr(fallback if value is None else value))


def _check(inputs: Inputs, row: Row) -> dict[str, Any]:
    from stepswitch.ledger.pricing import cost_usd

    price, usage = _price(inputs, row), _usage(inputs, row)
    problems = []
    listed = {
        "input": Decimal(repr(price.input)),
        "cached_input": _rate(price.cached_input, price.input),
        "cache_write": _rate(price.cache_write, price.input),
        "output": Decimal(repr(price.output)),
    }
    for name, rate in listed.items():
        if Decimal(getattr(row.rates, name)) != rate:
            problems.append(f"rates.{name} {getattr(row.rates, name)} is not the list {rate}")
    t, r = row.tokens, row.rates
    by_hand = (
        t.uncached * Decimal(r.input)
        + t.cached * Decimal(r.cached_input)
        + t.cache_write * Decimal(r.cache_write)
        + t.output * Decimal(r.output)
    ) / PER_MILLION
    if by_hand != Decimal(row.usd):
        problems.append(f"the row's tokens at its rates give ${by_hand}, not ${row.usd}")
    decoded = {
        "uncached": usage.uncached_prompt_tokens,
        "cached": usage.cached_tokens,
        "cache_write": usage.cache_write_tokens,
        "output": usage.completion_tokens,
        "reasoning": usage.reasoning_tokens,
    }
    for name, count in decoded.items():
        if getattr(t, name) != count:
            problems.append(f"tokens.{name} is {getattr(t, name)} by hand, {count} decoded")
    ledger = cost_usd(price, usage)
    diff = abs(ledger - float(Decimal(row.usd)))
    if diff > TOLERANCE_USD:
        problems.append(f"the ledger bills ${ledger!r}, the hand ${row.usd}")
    return {
        "fixture": row.fixture,
        "priced_as": f"{row.provider}/{row.model}",
        "tokens_by_hand": t.model_dump(),
        "tokens_decoded": decoded,
        "hand_usd": row.usd,
        "ledger_usd": format(ledger, ".12g"),
        "problems": problems,
    }


def fixtures(inputs: Inputs) -> Computed:
    rel = inputs.one("table")
    try:
        table = HandTable.model_validate(inputs.yaml(rel))
    except ValidationError as exc:
        raise EvidenceError(f"{rel}: {first_problem(exc)}") from exc
    rows = [_check(inputs, row) for row in table.rows]
    t = [row.tokens for row in table.rows]
    return Computed(
        {
            "rows": len(rows),
            "formats": len({row.wire_format for row in table.rows}),
            "providers": ", ".join(sorted({row.provider for row in table.rows})),
            "cached_rows": sum(x.cached > 0 for x in t),
            "cache_write_rows": sum(x.cache_write > 0 for x in t),
            "reasoning_rows": sum(x.reasoning > 0 for x in t),
            "mismatches": sum(bool(row["problems"]) for row in rows),
        },
        details=rows,
    )


METRICS = (
    Metric(
        "pricing.fixtures",
        ("table",),
        {
            "rows": INT,
            "formats": INT,
            "providers": TEXT,
            "cached_rows": INT,
            "cache_write_rows": INT,
            "reasoning_rows": INT,
            "mismatches": INT,
        },
        fixtures,
        "recorded payloads billed by the ledger against the dollars worked out by hand",
    ),
)
