"""Dollars per task as inline SVG: one group of bars per task, one bar per contestant (its first
attempt), solid to what is certain and pale up to the high end where usage was lost. Each group
links to its task's steps."""

from __future__ import annotations

import math

from stepswitch.site.shown import escape
from stepswitch.site.sources import ReplayRun
from stepswitch.site.view import Board, labels, money

COLORS = ("#2f6db5", "#d9822b", "#2e8b57", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d")
HEIGHT = 240
TOP, BOTTOM, LEFT = 14, 90, 64  # BOTTOM: room for a task name of 18 characters at 35 degrees
LABELLED_TASKS = 40  # past this many tasks, names are in the tooltips only


def _nice_top(value: float) -> float:
    """The axis's top: 1, 2, 2.5 or 5 times a power of ten, at or above `value`."""
    if value <= 0:
        return 0.01
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if value <= m * power * (1 + 1e-9))


def _tip(run: ReplayRun | None) -> str:
    if run is None:
        return "no run"
    if run.record is None:
        return run.problem or "no record"
    return f"{money(run.record.cost)}, {run.record.outcome}"


def dollars_chart(board: Board, board_id: str) -> str:
    tasks, contestants = board.tasks, board.contestants
    firsts: dict[tuple[str, str], ReplayRun | None] = {}
    for t in tasks:
        for c in contestants:
            cell = board.cell(t, c)
            firsts[(t, c)] = cell[0] if cell else None
    highs = [r.record.cost.high for r in firsts.values() if r is not None and r.record]
    top = _nice_top(max(highs, default=0.0))
    bar = max(4, min(28, 640 // max(1, len(tasks) * len(contestants))))
    group = bar * len(contestants) + max(6, bar // 2)
    width = LEFT + group * len(tasks) + (130 if len(tasks) <= LABELLED_TASKS else 20)
    plot = HEIGHT - TOP - BOTTOM
    out = [
        f'<svg class="chart" role="img" width="{width}" height="{HEIGHT}" '
        f'viewBox="0 0 {width} {HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>dollars per task, {escape(board.title)}</title>",
    ]
    for i in range(5):  # the axis: $0 to the top in quarters
        value = top * i / 4
        y = TOP + plot - plot * i / 4
        out.append(
            f'<line x1="{LEFT - 4}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 8}" y="{y + 4:.1f}" class="tick" text-anchor="end">'
            f"${value:.4g}</text>"
        )
    for ti, task in enumerate(tasks):
        x0 = LEFT + ti * group
        out.append(f'<a href="#{board_id}/t{ti}" class="bar-group">')
        for ci, contestant in enumerate(contestants):
            run = firsts[(task, contestant)]
            x = x0 + ci * bar
            rec = run.record if run else None
            tags = f" [{', '.join(labels(run))}]" if run and labels(run) else ""
            tip = escape(f"{task} - {contestant}{tags}: {_tip(run)}")
            color = COLORS[ci % len(COLORS)]
            if rec is None:
                out.append(
                    f'<text x="{x + bar / 2:.1f}" y="{TOP + plot - 3}" class="miss" '
                    f'text-anchor="middle"><title>{tip}</title>x</text>'
                )
                continue
            low_h = plot * min(rec.cost.low, top) / top
            high_h = plot * min(rec.cost.high, top) / top
            out.append(
                f'<rect x="{x:.1f}" y="{TOP + plot - high_h:.1f}" width="{bar - 1}" '
                f'height="{high_h:.1f}" fill="{color}" fill-opacity="0.35"><title>{tip}</title>'
                f'</rect><rect x="{x:.1f}" y="{TOP + plot - low_h:.1f}" width="{bar - 1}" '
                f'height="{low_h:.1f}" fill="{color}"><title>{tip}</title></rect>'
            )
        if len(tasks) <= LABELLED_TASKS:
            cx = x0 + bar * len(contestants) / 2
            name = escape(task if len(task) <= 18 else task[:17] + "…")
            out.append(
                f'<text x="{cx:.1f}" y="{TOP + plot + 12}" class="label" '
                f'transform="rotate(35 {cx:.1f} {TOP + plot + 12})">{name}</text>'
            )
        out.append("</a>")
    out.append(
        f'<line x1="{LEFT}" x2="{width - 10}" y1="{TOP + plot}" y2="{TOP + plot}" class="axis"/>'
    )
    out.append("</svg>")
    return "".join(out)


def caption(board: Board) -> str:
    """What the chart shows, under it as HTML text: it wraps to the page's width, where a line
    of text inside the SVG was cut at the chart's own (narrow for a few tasks)."""
    text = "one bar per contestant: its first attempt at the task"
    highs = [r.record.cost.high for r in board.runs if r.record is not None and r.attempt == 0]
    if highs and max(highs) == 0:
        text += "; every task run here cost $0.0000"
    return f'<p class="chart-caption">{escape(text)}</p>'


def legend(board: Board) -> str:
    items = []
    for ci, contestant in enumerate(board.contestants):
        runs = [r for r in board.runs if r.contestant == contestant]
        tags = sorted({tag for r in runs for tag in labels(r)})
        badge = "".join(f' <span class="badge b-{t}">{t}</span>' for t in tags)
        items.append(
            f'<span class="key"><i style="background:{COLORS[ci % len(COLORS)]}"></i>'
            f"{escape(contestant)}{badge}</span>"
        )
    hint = "pale: up to the high end where usage was lost; x: no record"
    return f'<p class="legend">{"".join(items)} <span class="hint">{hint}</span></p>'
