"""The replay page: one self-contained HTML file (inline CSS, inline SVG, a little inline script;
nothing fetched). Overviews are HTML made here; each task's runs are a JSON block that the script
parses and renders only when the task is opened, so a 200-task bench opens at once. Every text
from a record goes through `escape` here and `textContent` in the script: a record can never
inject markup."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from stepswitch.bench.files import Paired, SummaryFile
from stepswitch.site.chart import caption, dollars_chart, legend
from stepswitch.site.shown import escape, shown_json
from stepswitch.site.sources import ReplayRun
from stepswitch.site.view import (
    Board,
    ContestantTotals,
    grade,
    labels,
    money,
    run_json,
    tokens_text,
    totals,
)

# Nothing may load from anywhere: no script, style, font or image but the page's own.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
SCRIPTED_BANNER = (
    "SCRIPTED: these runs replay scripted replies; no real model answered, and nothing here says "
    "anything about any model's quality."
)
TASK_CHARS = 90  # of a task's name in the tables; the whole text is in its view


def _asset(name: str) -> str:
    return files("stepswitch.site").joinpath("assets", name).read_text(encoding="utf-8")


def badges(tags: list[str] | set[str]) -> str:
    return "".join(f' <span class="badge b-{escape(t)}">{escape(t)}</span>' for t in sorted(tags))


def json_block(block_id: str, data: Any) -> str:
    # "<" as \u003c: no "</script>" or "<!--" inside a record can end the block early.
    text = shown_json(data).replace("<", "\\u003c")
    return f'<script type="application/json" id="{block_id}">{text}</script>'


def document(title: str, body: str, *, refresh_s: int | None = None, script: bool = True) -> str:
    refresh = f' data-refresh="{refresh_s}"' if refresh_s else ""
    js = f"<script>{_asset('page.js')}</script>" if script else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{escape(title)}</title><style>{_asset('page.css')}</style></head>"
        f"<body{refresh}>{body}{js}</body></html>\n"
    )


def _short(task: str) -> str:
    first = task.strip().splitlines()[0] if task.strip() else "(no task)"
    return first if len(first) <= TASK_CHARS else first[: TASK_CHARS - 1] + "…"


def _totals_table(rows: list[ContestantTotals]) -> str:
    head = (
        "contestant",
        "task runs",
        "done",
        "hidden tests passed",
        "dollars",
        "tokens",
        "steps",
        "escalations",
        "gate failures",
        "tool refusals",
        "review rejections",
    )
    out = ["<table class='totals'><thead><tr>"]
    out += [f"<th>{h}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for t in rows:
        runs = f"{t.runs}" + (f" ({t.problems} without a record)" if t.problems else "")
        runs += f" ({t.running} running)" if t.running else ""
        graded = f"{t.graded_passed} of {t.graded}" if t.graded else "not graded"
        dollars = money(t.cost) + (
            f" + {t.unpriced_steps} unpriced steps" if t.unpriced_steps else ""
        )
        cells = (
            f"{escape(t.contestant)}{badges(t.labels)}",
            runs,
            str(t.done),
            graded,
            dollars,
            tokens_text(t.prompt_tokens, t.cached_tokens, t.completion_tokens),
            f"{t.steps:,}",
            str(t.escalations),
            str(t.gate_failures),
            str(t.refusals),
            str(t.rejections),
        )
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _number(value: Any, dollars: bool) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return escape(str(value))
    return f"${value:,.4f}" if dollars else f"{value:.4g}"


def _paired_line(p: Paired) -> str:
    # Dollars are printed as dollars; a ratio of dollars is a plain number.
    metric = p.metric
    dollars = "ratio" not in metric and any(w in metric.lower() for w in ("usd", "dollar", "cost"))
    text = f"<b>{escape(p.a)}</b> vs <b>{escape(p.b)}</b>, {escape(metric)}: "
    text += _number(p.estimate, dollars) if p.estimate is not None else "n/a"
    if p.low is not None and p.high is not None:
        text += f" ({p.level:.0%} interval {_number(p.low, dollars)} to {_number(p.high, dollars)})"
    text += f"; n = {p.n}"
    if p.method:
        text += f"; {escape(p.method)}"
    return f"<li>{text}</li>"


def _summary(board: Board) -> str:
    s = board.summary
    if board.kind != "bench":
        return ""
    if s is None:
        return "<h3>Paired summary</h3><p class='note'>no summary.json in this bench run</p>"
    lines = [_paired_line(p) for p in s.paired]
    data = s.model_dump(exclude={"paired", "schema_version"})
    rest = [
        f"<dt>{escape(k)}</dt><dd>{_number(v, False)}</dd>"
        for k, v in data.items()
        if isinstance(v, str | int | float)
    ]
    body = f"<ul class='paired'>{''.join(lines)}</ul>" if lines else "<p>no paired comparison</p>"
    return (
        _contestant_dollars(s)
        + f"<h3>Paired summary</h3>{body}"
        + (f"<dl class='kv'>{''.join(rest)}</dl>" if rest else "")
    )


def _contestant_dollars(s: SummaryFile) -> str:
    """Per contestant: the pass rate, what a run and a passed task cost, and the share of the
    dollars spent on runs that did not end `done`."""
    head = "<tr><th>contestant</th><th>passed</th><th>$ per run</th><th>$ per passed task</th>"
    head += "<th>$ on runs not done</th></tr>"
    rows = []
    for name, c in s.contestants.items():
        a = c.all
        per_pass = a.dollars_per_passed_task
        share = a.not_done_dollars_share
        rows.append(
            f"<tr><td>{escape(name)}</td><td>{100 * a.pass_rate:.1f}%</td>"
            f"<td>{_number(a.dollars_per_task_run.high, True)}</td>"
            f"<td>{_number(per_pass.high, True) if per_pass else '—'}</td>"
            f"<td>{'—' if share is None else f'{100 * share:.0f}%'}</td></tr>"
        )
    return f"<h3>Dollars</h3><table class='dollars'>{head}{''.join(rows)}</table>"


def _cell(board_id: str, ti: int, runs: list[ReplayRun]) -> str:
    if not runs:
        return "<td class='none'>—</td>"
    parts = []
    for run in runs:
        rec = run.record
        tags = badges(labels(run))
        g = grade(run)
        graded = f" · hidden tests {escape(g[0])}" if g else ""
        href = f"#{board_id}/t{ti}"
        if rec is None:
            parts.append(f"<a class='cell o-problem' href='{href}'>no record{graded}{tags}</a>")
            continue
        parts.append(
            f"<a class='cell o-{escape(rec.outcome)}' href='{href}'>{escape(rec.outcome)} · "
            f"{escape(money(rec.cost))} · {rec.totals.steps} steps{graded}{tags}</a>"
        )
    return "<td>" + "".join(parts) + "</td>"


def _tasks_table(board: Board, board_id: str) -> str:
    out = ["<table class='tasks'><thead><tr><th>task</th>"]
    out += [f"<th>{escape(c)}</th>" for c in board.contestants]
    out.append("</tr></thead><tbody>")
    for ti, task in enumerate(board.tasks):
        name = f"<a href='#{board_id}/t{ti}' title='{escape(task)}'>{escape(_short(task))}</a>"
        cells = "".join(_cell(board_id, ti, board.cell(task, c)) for c in board.contestants)
        out.append(f"<tr id='{board_id}-t{ti}'><th>{name}</th>{cells}</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _task_blocks(board: Board, board_id: str) -> str:
    blocks = []
    for ti, task in enumerate(board.tasks):
        data = {
            "board": board_id,
            "index": ti,
            "task": task,
            "contestants": list(board.contestants),
            "runs": {c: [run_json(r) for r in board.cell(task, c)] for c in board.contestants},
        }
        blocks.append(json_block(f"d-{board_id}-t{ti}", data))
    return "".join(blocks)


def board_html(board: Board, board_id: str) -> str:
    tags = {t for r in board.runs for t in labels(r)}
    notes = "".join(f"<li>{escape(n)}</li>" for n in board.notes)
    chart = dollars_chart(board, board_id)
    return (
        f"<section class='board' id='{board_id}'><h2>{escape(board.title)}{badges(tags)}</h2>"
        + (f"<ul class='notes'>{notes}</ul>" if notes else "")
        + f"<p class='count'>{len(board.tasks)} tasks, {len(board.contestants)} contestants, "
        f"{len(board.runs)} task runs</p>"
        + "<h3>Totals per contestant</h3>"
        + _totals_table(totals(board))
        + _summary(board)
        + "<h3>Dollars per task</h3>"
        + legend(board)
        + f"<div class='chart-box'>{chart}{caption(board)}</div>"
        + "<h3>Tasks</h3><p class='hint'>open a task to replay its steps side by side</p>"
        + _tasks_table(board, board_id)
        + f"<div class='task-view' id='{board_id}-view' hidden></div>"
        + _task_blocks(board, board_id)
        + "</section>"
    )


def render_page(
    board_list: list[Board],
    *,
    title: str = "Stepswitch replay",
    top: str = "",
    refresh_s: int | None = None,
) -> str:
    """The whole page. `top` is extra HTML above the boards (the dashboard's links)."""
    scripted = any("scripted" in labels(r) for b in board_list for r in b.runs)
    banner = f"<p class='banner'>{escape(SCRIPTED_BANNER)}</p>" if scripted else ""
    sources = sum(len(b.sources) for b in board_list)
    body = (
        f"<header>{top}<h1>{escape(title)}</h1>"
        f"<p class='sub'>{sources} recorded run folder(s); dollars at the list prices recorded "
        "with each run; paths relative to the repository each ran on</p>"
        f"{banner}</header><main>"
        + "".join(board_html(b, f"b{i}") for i, b in enumerate(board_list))
        + "</main>"
    )
    return document(title, body, refresh_s=refresh_s)
