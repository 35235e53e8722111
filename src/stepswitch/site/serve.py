"""`ssw serve`: a read-only dashboard on 127.0.0.1 over a runs folder and a ledger, on the standard
library's HTTP server. GET and HEAD only; what it reads is found again on each request (the run
cache skips files that did not change), so runs in progress refresh. A missing or corrupt ledger,
or a run that does not load, is a message on the page, never a crash of the server."""

from __future__ import annotations

import errno
import json
import socket
import socketserver
import sys
import threading
import time
import traceback
from dataclasses import dataclass, fields
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from stepswitch.agent.workspace.spend import LedgerRead, read_spend
from stepswitch.errors import SswError, UsageError
from stepswitch.ledger import GroupRow, ledger_command
from stepswitch.ledger.report import COLUMNS, group_cells
from stepswitch.site.dollars import dollars_text, priced
from stepswitch.site.liveness import process_gone
from stepswitch.site.page import CSP, badges, document, render_page
from stepswitch.site.shown import escape
from stepswitch.site.sources import Kind, RunCache, Source, load_source, locate
from stepswitch.site.view import boards, labels, tokens_text

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
BY = ("model", "step_type", "task", "worker", "tag")
REFRESH_S = 3  # while anything runs
STALE_S = 600  # a running bench (its task runs hold no lock) quiet this long may have lost it
ABANDONED = "abandoned: its ssw process is gone (`ssw runs clean` records it as interrupted)"


@dataclass(frozen=True)
class Row:
    source: Source
    key: str
    running: bool  # its records say running and its process may be alive
    quiet_s: float  # since its files last changed
    abandoned: bool = False  # its records say running, but no process holds the run's lock


class Dashboard:
    """What the server shows: it reads, never writes: the ledger opens read-only, as `ssw ledger`
    opens it, and a reservation whose process is gone stays for a writer to settle."""

    def __init__(self, runs: Path, ledger: Path) -> None:
        self.runs = runs
        self.ledger = ledger
        self.cache = RunCache()

    def _located(self, skipped: list[str] | None = None) -> dict[str, tuple[Kind, Path]]:
        if not self.runs.is_dir():
            return {}
        found: dict[str, tuple[Kind, Path]] = {}
        for kind, folder in locate(self.runs, skipped=skipped):
            key = "." if folder == self.runs else folder.relative_to(self.runs).as_posix()
            found[key] = (kind, folder)
        return found

    def rows(self, spend: LedgerRead, skipped: list[str] | None = None) -> list[Row]:
        rows = []
        now = time.time()
        for key, (kind, folder) in self._located(skipped).items():
            source = priced(load_source(kind, folder, self.cache), spend)
            abandoned = _running(source) and process_gone(source)
            running = _running(source) and not abandoned
            quiet = now - _last_change(folder) if running else 0.0
            rows.append(Row(source, key, running, quiet, abandoned))
        return rows

    def replay(self, key: str) -> str | None:
        found = self._located().get(key)  # only what was found: no path from the URL is opened
        if found is None:
            return None
        kind, folder = found
        source = priced(load_source(kind, folder, self.cache), read_spend(self.ledger))
        running = _running(source) and not process_gone(source)
        top = "<nav class='top'><a href='/'>← dashboard</a></nav>"
        return render_page(
            boards([source]),
            title=f"Stepswitch replay: {source.name}",
            top=top,
            refresh_s=REFRESH_S if running else None,
        )

    def index(self, by: str) -> str:
        spend = read_spend(self.ledger)
        skipped: list[str] = []
        rows = self.rows(spend, skipped)
        live = [r for r in rows if r.running]
        past = [r for r in rows if not r.running]
        said = "".join(f"<li>{escape(why)}</li>" for why in skipped)
        body = (
            "<header><nav class='top'><a href='#live'>runs in progress</a>"
            "<a href='#past'>past runs</a><a href='#ledger'>ledger</a></nav>"
            "<h1>Stepswitch dashboard</h1>"
            f"<p class='sub'>read-only; runs from {escape(str(self.runs))}, ledger "
            f"{escape(str(self.ledger))}</p></header><main>"
            f"<h2 id='live'>Runs in progress</h2>{self._table(live, spend, live=True)}"
            f"<h2 id='past'>Past runs</h2>{self._table(past, spend, live=False)}"
            + (f"<ul class='note skipped'>{said}</ul>" if said else "")
            + f"<h2 id='ledger'>Ledger</h2>{self._ledger(by)}</main>"
        )
        return document("Stepswitch dashboard", body, refresh_s=REFRESH_S if live else None)

    def _table(self, rows: list[Row], spend: LedgerRead, live: bool) -> str:
        if not rows:
            if not self.runs.is_dir():
                return (
                    f"<p class='error-box'>no runs folder at {escape(str(self.runs))}: "
                    "pass --runs DIR (a repository's .ssw/runs, or bench/runs)</p>"
                )
            return "<p class='note'>none</p>"
        head = "<tr><th>run</th><th>task</th><th>outcome</th><th>dollars</th><th>tokens</th>"
        head += "<th>steps</th><th>started</th></tr>"
        out = [f"<table class='runs'><thead>{head}</thead><tbody>"]
        for row in sorted(rows, key=_started, reverse=True):
            out.append(_run_row(row, spend, live))
        out.append("</tbody></table>")
        return "".join(out)

    def _ledger(self, by: str) -> str:
        tabs = "".join(
            f"<a href='/?by={b}#ledger' class='{'on' if b == by else ''}'>"
            f"by {b.replace('_', ' ')}</a>"
            for b in BY
        )
        try:
            data = json.loads(ledger_command(self.ledger, None, by, as_json=True))
        except SswError as exc:
            return f"<p class='tabs'>{tabs}</p><p class='error-box'>{escape(str(exc))}</p>"
        except Exception as exc:  # never a crash: the page says what went wrong
            return (
                f"<p class='tabs'>{tabs}</p><p class='error-box'>the ledger "
                f"{escape(str(self.ledger))} cannot be read: {escape(type(exc).__name__)}: "
                f"{escape(str(exc))}</p>"
            )
        names = {f.name for f in fields(GroupRow)}
        groups = [GroupRow(**{k: v for k, v in g.items() if k in names}) for g in data["groups"]]
        if not groups:
            return f"<p class='tabs'>{tabs}</p><p class='note'>no calls recorded in this ledger</p>"
        total = GroupRow(**{k: v for k, v in data["total"].items() if k in names})
        head = [by.replace("_", " "), *COLUMNS]
        out = [f"<p class='tabs'>{tabs}</p><table class='ledger'><thead><tr>"]
        out += [f"<th>{h}</th>" for h in head]
        out.append("</tr></thead><tbody>")
        for g in [*groups, total]:
            cells = [escape(c) for c in group_cells(g)]
            out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        out.append("</tbody></table>")
        if total.lost or total.open:
            out.append("<p class='hint'>ranges: usage was lost or a call is still open</p>")
        if by == "tag":
            out.append("<p class='hint'>a call carrying several tags counts once under each</p>")
        return "".join(out)


def _running(source: Source) -> bool:
    return any(r.record is not None and r.record.outcome == "running" for r in source.runs)


def _last_change(folder: Path) -> float:
    stamps = [p.stat().st_mtime for p in folder.rglob("*.json*") if p.is_file()]
    return max(stamps, default=time.time())


def _started(row: Row) -> str:
    recs = [r.record.started_at for r in row.source.runs if r.record]
    return max(recs, default="")


def _run_row(row: Row, spend: LedgerRead, live: bool) -> str:
    s = row.source
    tags = badges({t for r in s.runs for t in labels(r)})
    link = f"<a href='/replay/{escape(quote(row.key))}'>{escape(s.name)}</a>{tags}"
    recs = [r.record for r in s.runs if r.record is not None]
    loaded = [r.loaded for r in s.runs if r.loaded is not None]
    steps = [m for lr in loaded for m in lr.model_steps]
    if s.kind == "bench":
        task = f"bench: {len({r.task for r in s.runs})} tasks, {len(s.runs)} task runs"
        done = sum(r.outcome == "done" for r in recs)
        outcome = f"{done} done of {len(s.runs)}"
    else:
        task = s.runs[0].task.splitlines()[0][:90] if s.runs[0].task.strip() else ""
        outcome = recs[0].outcome if recs else f"no record: {s.runs[0].problem}"
    # The records beside the ledger: a killed run's steps so far and its call in flight.
    dollars = dollars_text(s, spend)
    if live or row.abandoned:
        unpriced = sum(m.cost is None for m in steps)
        dollars += f" + {unpriced} unpriced steps" if unpriced else ""
        if row.abandoned:
            outcome = ABANDONED
        elif row.quiet_s > STALE_S:
            outcome = f"running? no event for {row.quiet_s / 60:.0f} min (its process may be gone)"
        else:
            outcome = "running"
    prompt = sum(m.prompt_tokens for m in steps)
    cached = sum(m.cached_tokens for m in steps)
    out_tokens = sum(m.completion_tokens for m in steps)
    cells = (
        link,
        escape(task),
        escape(outcome),
        escape(dollars),
        tokens_text(prompt, cached, out_tokens),
        str(len(steps)),
        escape(_started(row)[:19].replace("T", " ")),
    )
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], dashboard: Dashboard) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)
        self.dashboard = dashboard
        self.loopback = address[0] in LOOPBACK

    def server_bind(self) -> None:
        # HTTPServer.server_bind asks DNS for the host's full name, which can hang offline.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


class _Handler(BaseHTTPRequestHandler):
    server: DashboardServer
    server_version = "ssw-dashboard"

    def log_message(self, format: str, *args: object) -> None:  # quiet: one line per error only
        return

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def do_GET(self) -> None:
        self._answer(body=True)

    def _answer(self, body: bool) -> None:
        if self.server.loopback and not self._host_is_loopback():
            # Another name for this address (DNS rebinding): a web page must not read the ledger.
            self._send(
                HTTPStatus.FORBIDDEN, "<p>this dashboard answers to 127.0.0.1 only</p>", body
            )
            return
        parts = urlsplit(self.path)
        try:
            status, html = self._route(parts.path, parse_qs(parts.query))
        except Exception:  # a bug in one view: said on the page and on stderr, the server stays
            traceback.print_exc(file=sys.stderr)
            status = HTTPStatus.INTERNAL_SERVER_ERROR
            html = document(
                "error",
                "<main><p class='error-box'>the dashboard hit a bug; "
                "see the terminal that runs ssw serve</p></main>",
                script=False,
            )
        self._send(status, html, body)

    def _route(self, path: str, query: dict[str, list[str]]) -> tuple[HTTPStatus, str]:
        dash = self.server.dashboard
        if path in ("/", "/index.html"):
            by = (query.get("by") or ["model"])[0]
            return HTTPStatus.OK, dash.index(by if by in BY else "model")
        if path.startswith("/replay/"):
            page = dash.replay(unquote(path.removeprefix("/replay/")).strip("/") or ".")
            if page is not None:
                return HTTPStatus.OK, page
        body = "<main><p>nothing here; <a href='/'>the dashboard</a></p></main>"
        return HTTPStatus.NOT_FOUND, document("not found", body, script=False)

    def _host_is_loopback(self) -> bool:
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host[1:].split("]")[0]
        return name in LOOPBACK

    def _send(self, status: HTTPStatus, html: str, body: bool) -> None:
        data = html.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.end_headers()
        if body:
            self.wfile.write(data)


def open_dashboard(runs: Path, ledger: Path, host: str, port: int) -> DashboardServer:
    """The server, bound; `serve_forever()` answers."""
    try:
        return DashboardServer((host, port), Dashboard(runs, ledger))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"port {port} on {host} is in use; pass --port N") from exc
        raise UsageError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from exc


def start_dashboard(runs: Path, ledger: Path, host: str, port: int) -> DashboardServer:
    """The server, answering from a background thread (`shutdown()` stops it)."""
    server = open_dashboard(runs, ledger, host, port)
    threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="ssw-dashboard",
        daemon=True,
    ).start()
    return server
