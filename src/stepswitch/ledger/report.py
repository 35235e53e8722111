"""`ssw ledger`: calls, tokens and dollars per group, as ranges wherever usage was lost."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from stepswitch.errors import UsageError
from stepswitch.ledger.book import OVERRUN_TOLERANCE_USD, Ledger
from stepswitch.ledger.overreport import over_report_text, over_reported
from stepswitch.ledger.store import CallRow, LedgerError
from stepswitch.ledger.view import orphaned, read_ledger
from stepswitch.records.money import format_usd

By = Literal["model", "step_type", "task", "worker", "tag"]
UNTAGGED = "(untagged)"


@dataclass(frozen=True)
class GroupRow:
    key: str
    calls: int  # attempts with a row: retried, refused-by-status and lost ones included
    errors: int  # failed: an HTTP error status recorded (a 400's bound too), or never sent
    lost: int  # usage lost: a bound from 0 to the reservation
    open: int  # still reserved (a live process mid-call, or another host's)
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    low_usd: float
    high_usd: float
    share_low: float  # the group's share of all dollars, bounded like the dollars
    share_high: float
    unpriced_calls: int
    over_reserved: int = 0  # settled above their reservation: usage broke a bound (ADR 0013)
    over_usd: float = 0.0  # by how much, summed
    over_reported: int = 0  # billed more completion tokens than the max_tokens sent (ADR 0025)

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def exact(self) -> bool:
        return self.low_usd == self.high_usd

    def dollars_text(self) -> str:
        priced = self.calls > self.unpriced_calls or self.high_usd > 0
        money = format_usd(self.low_usd, self.high_usd)
        if not self.unpriced_calls:
            return money
        return f"{money} +{self.unpriced_calls} unpriced" if priced else "unpriced"

    def share_text(self) -> str:
        if self.dollars_text() == "unpriced":
            return "n/a"
        low, high = round(self.share_low * 100), round(self.share_high * 100)
        return f"{low}%" if low == high else f"{low}%-{high}%"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cached_share"] = self.cached_share
        data["exact"] = self.exact
        return data


def _dollars(row: CallRow) -> tuple[float, float]:
    if not row.priced:
        return 0.0, 0.0  # counted in unpriced_calls instead: never $0
    if row.status == "reserved":
        return 0.0, row.reserved_usd
    return row.low_usd or 0.0, row.high_usd or 0.0


def _over(row: CallRow) -> float:
    """Dollars billed above the reservation; older rows have no over_usd, so compare."""
    if not row.priced or row.status != "settled":
        return 0.0
    over = (row.usd or 0.0) - row.reserved_usd
    return over if over > OVERRUN_TOLERANCE_USD else 0.0


def _failed(row: CallRow) -> bool:
    """A failed attempt: never sent, or answered with an HTTP error status, whether it cost $0
    (a 429) or is a bound (a 400 may have billed the prompt): the row says which."""
    return row.status in ("error", "not_sent") or (row.http_status or 0) >= 400


def _keys(row: CallRow, by: By) -> list[str]:
    if by == "model":
        return [f"{row.provider} {row.model}"]
    if by == "step_type":
        return [row.step_type]
    if by == "task":
        return [row.task_id]
    if by == "worker":
        return [row.worker]
    return [f"{k}={v}" for k, v in sorted(row.tags.items())] or [UNTAGGED]


def _aggregate(key: str, rows: list[CallRow], total_low: float, total_high: float) -> GroupRow:
    low = sum(_dollars(r)[0] for r in rows)
    high = sum(_dollars(r)[1] for r in rows)
    # The true share x/(x + rest): smallest with x low and the rest high, largest the other way.
    rest_low, rest_high = max(0.0, total_low - low), max(0.0, total_high - high)
    return GroupRow(
        key=key,
        calls=len(rows),
        errors=sum(_failed(r) for r in rows),
        lost=sum(r.status == "bound" for r in rows),
        open=sum(r.status == "reserved" for r in rows),
        prompt_tokens=sum(r.prompt_tokens or 0 for r in rows),
        cached_tokens=sum(r.cached_tokens or 0 for r in rows),
        completion_tokens=sum(r.completion_tokens or 0 for r in rows),
        reasoning_tokens=sum(r.reasoning_tokens or 0 for r in rows),
        low_usd=low,
        high_usd=high,
        share_low=low / (low + rest_high) if low + rest_high > 0 else 0.0,
        share_high=high / (high + rest_low) if high + rest_low > 0 else 0.0,
        over_reserved=sum(_over(r) > 0 for r in rows),
        over_usd=sum(_over(r) for r in rows),
        over_reported=sum(over_reported(r) for r in rows),
        unpriced_calls=sum(
            not r.priced and r.status in ("settled", "bound", "reserved") for r in rows
        ),
    )


def _groups(rows: list[CallRow], by: By) -> tuple[list[GroupRow], GroupRow]:
    total_low = sum(_dollars(r)[0] for r in rows)
    total_high = sum(_dollars(r)[1] for r in rows)
    grouped: dict[str, list[CallRow]] = defaultdict(list)
    for row in rows:
        for key in _keys(row, by):
            grouped[key].append(row)
    groups = [_aggregate(k, v, total_low, total_high) for k, v in grouped.items()]
    groups.sort(key=lambda g: (-g.high_usd, -g.calls, g.key))
    return groups, _aggregate("total", rows, total_low, total_high)


def _check_by(by: str) -> By:
    if by not in get_args(By):
        raise UsageError(f"unknown --by {by!r}; use one of {', '.join(get_args(By))}")
    return by  # type: ignore[return-value]


def report(ledger: Ledger, run_id: str | None, by: By) -> list[GroupRow]:
    """One row per group; with by="tag" a call appears once per tag it carries."""
    return _groups(ledger.rows(run_id), _check_by(by))[0]


# The columns after the group's own, as `ssw ledger` and the site's ledger tab head them.
COLUMNS = (
    "calls",
    "errors",
    "bounded",
    "prompt tok",
    "cached",
    "completion tok",
    "dollars",
    "share",
)


def group_cells(g: GroupRow) -> list[str]:
    """A group's row as text: its key, then a cell for each of COLUMNS."""
    return [
        g.key,
        f"{g.calls:,}",
        f"{g.errors:,}",
        f"{g.lost + g.open:,}",
        f"{g.prompt_tokens:,}",
        f"{g.cached_share:.0%}",
        f"{g.completion_tokens:,}",
        g.dollars_text(),
        g.share_text(),
    ]


def render_report(
    rows: Iterable[GroupRow], by: str = "group", total: GroupRow | None = None
) -> str:
    lines: list[list[str]] = [[by, *COLUMNS]]
    for g in [*rows, *([total] if total else [])]:
        lines.append(group_cells(g))
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS) + 1)]
    out = []
    for line in lines:
        cells = [line[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)
        ]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def _orphaned_line(rows: list[CallRow]) -> str:
    high = sum(r.reserved_usd for r in rows if r.priced)
    return (
        f"{len(rows)} call(s) left open by a process that ended mid-call: counted up to their "
        f"reservations (${high:.4f} in all) until the next `ssw run` or bench settles them as "
        "bounds (this report writes nothing)"
    )


def _unknown_run(path: Path, run_id: str, known: list[str]) -> LedgerError:
    shown = ", ".join(known[-3:]) if known else "none"
    return LedgerError(
        path,
        f"holds no call of run {run_id!r} (its latest runs: {shown})",
        "check the id with `ssw runs` (a run refused before its first call has no rows), or "
        "leave out --run",
    )


_LIARS_SHOWN = 5  # a bench stops a lying provider at its first over-report: few rows


def _liar_json(row: CallRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "run": row.run_id,
        "step": row.step,
        "provider": row.provider,
        "model": row.model,
        "completion_tokens": row.completion_tokens,
        "max_output_tokens": row.max_output_tokens,
        "prompt_tokens": row.prompt_tokens,
        "prompt_bytes": row.prompt_bytes,
        "text": over_report_text(row),
    }


def _liar_lines(rows: list[CallRow]) -> list[str]:
    lines = [f"{over_report_text(r)} (run {r.run_id}, step {r.step})" for r in rows]
    more = len(lines) - _LIARS_SHOWN
    return lines[:_LIARS_SHOWN] + (
        [f"... and {more} more over-reported call(s)"] if more > 0 else []
    )


def ledger_command(path: Path, run_id: str | None, by: str, as_json: bool) -> str:
    """What `ssw ledger` prints: read-only, so it never creates, migrates or settles anything."""
    checked = _check_by(by)
    every = read_ledger(path).rows
    rows = every if run_id is None else [r for r in every if r.run_id == run_id]
    if run_id is not None and not rows:
        raise _unknown_run(path, run_id, list(dict.fromkeys(r.run_id for r in every)))
    left_open = orphaned(rows)
    groups, total = _groups(rows, checked)
    if as_json:
        return json.dumps(
            {
                "ledger": str(path),
                "run": run_id,
                "by": checked,
                "groups": [g.to_json() for g in groups],
                "total": total.to_json(),
                "orphaned": [r.id for r in left_open],  # open, their process gone: not settled
                "over_reported": [_liar_json(r) for r in rows if over_reported(r)],
            },
            indent=2,
        )
    lines = [_orphaned_line(left_open)] if left_open else []
    if not rows:
        lines.append(f"no calls recorded in {path}")
        return "\n".join(lines)
    lines.append(render_report(groups, by=checked, total=total))
    if total.lost or total.open:
        lines.append(
            "ranges: usage was lost or a call is still open; the high end is its reservation"
        )
    if total.over_reserved:
        lines.append(
            f"{total.over_reserved} call(s) cost more than their reservation, "
            f"${total.over_usd:.4f} in all: the provider billed more tokens than the request "
            "can hold or more output than its cap, so a budget may have been passed by that much "
            "(ssw stops a run at such a call; ADR 0013)"
        )
    lines += _liar_lines([r for r in rows if over_reported(r)])
    if by == "tag":
        lines.append("a call carrying several tags counts once under each")
    return "\n".join(lines)
