"""The registry's commands: `ssw models` (the models table), `ssw prices` and `ssw prices refresh`
(list prices, and read a provider's priced model list into your price cache), and `ssw probe`
(what a model really does); app.py registers them, and checks `ssw run --base-url` with
`_checked_url` too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from stepswitch.cli.options import JsonTableOption
from stepswitch.cli.trust_option import TrustEndpoints
from stepswitch.errors import UsageError

prices_app = typer.Typer(
    rich_markup_mode=None,
    help="Provider list prices in the registry: list them, refresh them.",
    invoke_without_command=True,
)


def _checked_url(flag: str, url: str | None) -> str | None:
    from stepswitch.registry.presets import URL_EXAMPLE, base_url_problem

    problem = None if url is None else base_url_problem(url)
    if problem is not None:
        raise UsageError(f"{flag} {url!r} {problem} (fix: e.g. {URL_EXAMPLE})")
    return url


def models(
    provider: Annotated[str | None, typer.Option(help="Only this provider's models.")] = None,
    as_json: JsonTableOption = False,
) -> None:
    """The models in the registry: prices per million tokens, efforts, context, capabilities."""
    from stepswitch.registry.table import model_rows, render_rows

    rows = model_rows(provider)
    typer.echo(json.dumps(rows, indent=2) if as_json else render_rows(rows))


@prices_app.callback()
def prices(ctx: typer.Context) -> None:
    """Every model's list prices in $ per million tokens, with their date, source, and where
    each came from: the preset, or your price cache (read from a model list, for one host)."""
    if ctx.invoked_subcommand is not None:
        return
    from stepswitch.registry.presets import load_registry
    from stepswitch.registry.price_list import render_prices

    typer.echo(render_prices(list(load_registry().values())))


@prices_app.command("refresh")
def prices_refresh(
    provider: Annotated[str, typer.Argument(help="A provider preset name, e.g. tokenfactory.")],
    base_url: Annotated[str | None, typer.Option(help="Ask this URL instead.")] = None,
    trust_endpoint: TrustEndpoints = None,
    write_preset: Annotated[
        bool,
        typer.Option(
            "--write-preset",
            help="For maintainers: rewrite the preset file registry/providers/PROVIDER.toml "
            "(the one ssw ships) instead of your price cache.",
        ),
    ] = False,
) -> None:
    """Read the provider's priced model list into your price cache ($SSW_CACHE_DIR, else
    $XDG_CACHE_HOME/stepswitch or ~/.cache/stepswitch), kept for the host it was read from;
    no installed file changes unless --write-preset."""
    from datetime import date

    from stepswitch.registry.presets import clear_cache, get_provider, load_registry, preset_path
    from stepswitch.registry.price_list import not_refreshable
    from stepswitch.registry.refresh import refresh_prices
    from stepswitch.registry.trust import Trust, check_sender
    from stepswitch.wire.open import api_key_from_env

    spec = get_provider(provider)
    if not spec.prices_endpoint:  # before asking for a key this could never use
        raise not_refreshable(spec, list(load_registry().values()))
    url = _checked_url("--base-url", base_url)
    if write_preset and url is not None:
        raise UsageError("--write-preset reads the preset's own address; drop --base-url")
    check_sender(spec, url, Trust.named(trust_endpoint), typer.echo)
    api_key = api_key_from_env(spec)
    if not write_preset:
        from stepswitch.registry.cache_refresh import refresh_cache

        for line in refresh_cache(spec, url, Trust.named(trust_endpoint).with_url(url)):
            typer.echo(line)
        return
    changes = refresh_prices(
        spec,
        preset_path(provider),
        base_url=url,
        api_key=api_key,
        today=date.today(),
    )
    clear_cache()
    if not changes:
        typer.echo(f"{provider}: prices unchanged")
    for change in changes:
        typer.echo(str(change))


def probe(
    provider: Annotated[str, typer.Argument(help="A provider preset name.")],
    model: Annotated[str, typer.Argument(help="A model id from `ssw models`.")],
    base_url: Annotated[str | None, typer.Option(help="Probe this URL instead.")] = None,
    out: Annotated[Path | None, typer.Option(help="Registry folder to write probes/ into.")] = None,
    check_context: Annotated[
        bool | None,
        typer.Option(
            "--check-context/--skip-context",
            help="Probe the context limit. It fills the window, so by default only local servers.",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds each check's call may take.")
    ] = 60.0,
    trust_endpoint: TrustEndpoints = None,
) -> None:
    """Probe what a model really does: tools, JSON schema, streaming, usage, efforts, cache;
    each check's line printed as it ends. Exit 1 when a check the registry claims fails, or
    when no check got an answer."""
    from stepswitch.cli.outputs import writable_folder
    from stepswitch.registry.presets import get_provider, registry_dir
    from stepswitch.registry.trust import Trust, check_sender
    from stepswitch.util.text import escape_controls
    from stepswitch.wire.probe import run_probe
    from stepswitch.wire.probe_report import (
        check_header,
        format_check,
        probe_exit_code,
        probe_verdict,
        write_probe,
    )

    spec = get_provider(provider)
    url = _checked_url("--base-url", base_url)
    root = writable_folder("--out", out or registry_dir())  # before the calls it would waste
    check_sender(spec, url, Trust.named(trust_endpoint), typer.echo)
    typer.echo(f"probe {provider} / {model} at {url or spec.base_url}, {timeout:g} s a call")
    typer.echo(check_header())
    report = run_probe(
        spec,
        model,
        base_url=url,
        check_context=check_context,
        timeout_s=timeout,
        # typer.echo flushes: each line shows as its check ends, into a pipe too.
        on_result=lambda r: typer.echo(escape_controls(format_check(r), keep_newlines=False)),
    )
    path = write_probe(report, root)
    typer.echo(f"{report.calls} calls ({report.wire_format}), probed at {report.probed_at}")
    for line in probe_verdict(report):
        typer.echo(line)
    typer.echo(f"written: {path}")
    raise typer.Exit(probe_exit_code(report))
