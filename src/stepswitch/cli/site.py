"""`ssw site build [RUN ...] --out DIR`: the replay page from recorded runs, one static file;
`ssw serve`: the local read-only dashboard over a runs folder and a ledger. Exit 0; 2 for a
folder with no runs, a page that would hold a secret-shaped string, or a port in use."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from stepswitch.cli.options import LedgerFileOption
from stepswitch.errors import UsageError
from stepswitch.util.text import escape_controls

site_app = typer.Typer(
    rich_markup_mode=None,
    help="The replay page: recorded runs, step by step.",
    no_args_is_help=True,
)

# What `ssw site build` reads when no RUN is named: the runs committed in this repository.
# Where runs are when none is named: a repository's own runs, then ssw's committed ones.
DEFAULT_RUNS = (Path(".ssw/runs"), Path("bench/runs"), Path("docs/runs"))
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@site_app.callback()
def site() -> None:
    """The replay page: recorded runs, step by step, as one static file."""


@site_app.command("build")
def build(
    runs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="RUN",
            help="Run folders, bench run folders, or folders holding them "
            "(default: .ssw/runs, bench/runs and docs/runs here, those that hold runs).",
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Where index.html goes. The default is under .ssw/, which a run's check for "
            "uncommitted changes passes over.",
        ),
    ] = Path(".ssw/site"),
    title: Annotated[str | None, typer.Option(help="The page's title.")] = None,
) -> None:
    """One static page (no external assets; works from file://) that replays the runs: contestants
    side by side, task by task and step by step, with totals, dollars per task and the paired
    summary."""
    from stepswitch.cli.outputs import writable_folder
    from stepswitch.site.build import build_site
    from stepswitch.site.sources import locate

    paths = list(runs or [p for p in DEFAULT_RUNS if p.is_dir() and locate(p)])
    if not paths:
        raise UsageError(
            "name the run folders to show, e.g. `ssw site build .ssw/runs/<id>` "
            "(none given, and no .ssw/runs, bench/runs or docs/runs here)"
        )
    built = build_site(paths, writable_folder("--out", out), title)
    for warning in built.warnings:
        typer.echo(f"warning: {warning}", err=True)
    for why in built.unloaded:  # on the page as "no record": said here too, never a silent count
        typer.echo(escape_controls(f"no record: {why}", keep_newlines=False))
    unloaded = f", {len(built.unloaded)} without a record" if built.unloaded else ""
    typer.echo(
        f"page: {built.page} ({built.sources} run folder(s), {built.task_runs} task runs"
        f"{unloaded}, {built.bytes / 1024:,.0f} kB)"
    )


def host_warning(host: str) -> str | None:
    if host in LOOPBACK_HOSTS:
        return None
    return (
        f"warning: listening on {host}, not 127.0.0.1: anyone who can reach this machine can "
        "read these runs and the ledger (no login, no TLS)"
    )


def serve_command(
    port: Annotated[int, typer.Option(min=0, max=65535, help="The port (0: any free one).")] = 8765,
    runs: Annotated[
        Path, typer.Option(help="The runs folder: a repository's .ssw/runs, or bench/runs.")
    ] = Path(".ssw/runs"),
    ledger: LedgerFileOption = None,
    host: Annotated[
        str,
        typer.Option(help="Listen here. Anything but 127.0.0.1 lets other machines read it."),
    ] = "127.0.0.1",
) -> None:
    """A local read-only dashboard: runs in progress (refreshing), past runs, the ledger by model,
    step type, task, worker or tag, and the replay of any run. Ctrl-C stops it."""
    from stepswitch.ledger.tally import ever_made
    from stepswitch.ledger.view import read_ledger
    from stepswitch.site.serve import open_dashboard

    path = ledger or Path(os.environ.get("SSW_LEDGER") or ".ssw/ledger.sqlite")
    if runs.exists() and not runs.is_dir():
        raise UsageError(
            f"--runs {runs} is not a folder (fix: a repository's .ssw/runs, or bench/runs)"
        )
    if ever_made(path):
        # A damaged or foreign file, or one lost (its tally counted writes): one line, exit 2.
        read_ledger(path)
    server = open_dashboard(runs, path, host, port)  # a host it cannot listen on: one line
    warning = host_warning(host)  # only once it listens there
    if warning:
        typer.echo(warning, err=True)
    typer.echo(f"dashboard: {server.url} (read-only; Ctrl-C stops it)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("stopped")
    finally:
        server.server_close()
