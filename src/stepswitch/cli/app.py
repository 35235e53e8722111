"""The `ssw` command. Parse, call, print: no logic of its own. Heavy imports stay inside commands
so `ssw --help` starts fast."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from stepswitch.cli.bench import bench_app
from stepswitch.cli.claims import claims_app, prove_command
from stepswitch.cli.help import SswGroup
from stepswitch.cli.init import init_command
from stepswitch.cli.model_flags import BaseUrlOption, PriceOption, given_price
from stepswitch.cli.runs import runs_app
from stepswitch.cli.site import serve_command, site_app
from stepswitch.cli.trust_option import TrustEndpoints
from stepswitch.errors import SswError, UsageError

# Click's own errors (a bad option value, an unknown command), caught in main() below. Typer
# vendors Click as typer._click in its recent releases; before, it ran on click itself.
try:
    from typer._click.exceptions import ClickException
    from typer._click.exceptions import UsageError as ClickUsageError
except ImportError:  # pragma: no cover
    from click.exceptions import (  # type: ignore[no-redef, import-not-found, assignment, unused-ignore]
        ClickException,
    )
    from click.exceptions import (  # type: ignore[no-redef, import-not-found, assignment, unused-ignore]
        UsageError as ClickUsageError,
    )

app = typer.Typer(
    cls=SswGroup,
    rich_markup_mode=None,
    name="ssw",
    help="Stepswitch: give each step of a coding task to the model that fits it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"ssw {version('stepswitch')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print ssw's version."
        ),
    ] = False,
) -> None:
    pass


prices_app = typer.Typer(
    rich_markup_mode=None,
    help="Provider list prices in the registry: list them, refresh them.",
    invoke_without_command=True,
)
app.add_typer(prices_app, name="prices")
policy_app = typer.Typer(
    rich_markup_mode=None, help="Policy files: which worker takes which step.", no_args_is_help=True
)
app.add_typer(policy_app, name="policy")
app.add_typer(bench_app, name="bench")
app.add_typer(runs_app, name="runs")
app.add_typer(claims_app, name="claims")
app.add_typer(site_app, name="site")
app.command("serve")(serve_command)
app.command("prove")(prove_command)
app.command("init")(init_command)


def _checked_url(flag: str, url: str | None) -> str | None:
    from stepswitch.registry.presets import URL_EXAMPLE, base_url_problem

    problem = None if url is None else base_url_problem(url)
    if problem is not None:
        raise UsageError(f"{flag} {url!r} {problem} (fix: e.g. {URL_EXAMPLE})")
    return url


@app.command()
def models(
    provider: Annotated[str | None, typer.Option(help="Only this provider's models.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
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


@app.command()
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


@policy_app.command("check")
def policy_check(
    path: Annotated[Path, typer.Argument(help="A policy file, e.g. bench/policies/x.toml.")],
    runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--runs",
            metavar="<folder>",
            help="Run records (e.g. .ssw/runs, a bench folder; repeatable): also show per step "
            "type the cached share its worker had and what a switch would add to the next call.",
        ),
    ] = None,
) -> None:
    """Without calling any model: which worker takes each step type at each escalation level."""
    from stepswitch.agent.worker_prices import in_force
    from stepswitch.policy.check import check_policy, render_policy_check
    from stepswitch.policy.measured import load_runs, measure
    from stepswitch.policy.model import load_policy
    from stepswitch.policy.suggest import render_switch_costs, switch_costs
    from stepswitch.registry.presets import load_registry

    policy = load_policy(path)
    registry = in_force(policy, load_registry())  # each worker's price for its host (ADR 0061)
    text = render_policy_check(check_policy(policy, registry))
    if runs:
        costs = switch_costs(policy, measure(load_runs(runs)[0]), registry)
        text += "\n" + "\n".join(render_switch_costs(costs))
    typer.echo(text)


@policy_app.command("suggest")
def policy_suggest(
    runs: Annotated[
        list[Path] | None,
        typer.Argument(metavar="[runs]...", help="Run records: .ssw/runs, or run folders."),
    ] = None,
    policy_path: Annotated[
        Path | None,
        typer.Option("--policy", metavar="<file>", help="The policy to improve on (required)."),
    ] = None,
    bench: Annotated[
        list[Path] | None,
        typer.Option("--bench", metavar="<folder>", help="A bench run folder (repeatable)."),
    ] = None,
    floor: Annotated[
        float,
        typer.Option(
            "--floor",
            min=0.0,
            max=1.0,
            help="The least clean share (its interval's lower bound) a worker must clear.",
        ),
    ] = 0.8,
    min_steps: Annotated[
        int, typer.Option("--min-steps", min=1, help="The least steps of a type to judge by.")
    ] = 5,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="<file>", help="Write the suggested policy here."),
    ] = None,
) -> None:
    """From step records: each model's measured pass-through and dollars per step type, and the
    cheapest worker of the policy per step type that clears --floor. It claims nothing: it
    prints the commands that would test the suggestion."""
    import tomli_w

    from stepswitch.policy.measured import load_runs, measure
    from stepswitch.policy.model import load_policy, validate_policy
    from stepswitch.policy.suggest import (
        render_measured,
        render_suggestion,
        suggest,
        suggested_policy,
    )
    from stepswitch.registry.presets import load_registry
    from stepswitch.util.toml import read_toml

    if policy_path is None:
        raise UsageError("name the policy to improve on: ssw policy suggest RUNS... --policy P")
    folders = [*(runs or []), *(bench or [])]
    if not folders:
        raise UsageError("name run records: ssw policy suggest .ssw/runs --policy P")
    if out is not None and out.exists():
        raise UsageError(f"{out} exists: write the suggestion to a new file")
    policy, registry = load_policy(policy_path), load_registry()
    loaded, built_in = load_runs(folders)
    if not loaded:
        raise UsageError("no run of a policy in those records (only built-in contestants')")
    measured = measure(loaded)
    choices = suggest(
        policy, measured, registry, runs=len(loaded), floor=floor, min_steps=min_steps
    )
    if out is not None:
        raw = read_toml(policy_path, "policy file", "name a TOML policy file")
        table = suggested_policy(raw, choices)
        validate_policy(table, str(out), registry)
        out.write_text(
            f"# Suggested by ssw policy suggest from {len(loaded)} runs; untested.\n"
            + tomli_w.dumps(table),
            encoding="utf-8",
        )
    lines = render_measured(measured)
    if built_in:
        lines.append(f"({built_in} runs of the built-in contestants oracle and null left out)")
    lines += render_suggestion(choices, len(loaded), policy_path, out)
    typer.echo("\n".join(lines))


@app.command()
def gates(
    path: Annotated[Path, typer.Argument(help="The repository whose gates to run.")],
    changed: Annotated[
        list[str] | None,
        typer.Option("--changed", help="A changed file (repeatable): impacted tests run first."),
    ] = None,
    sandbox: Annotated[
        str,
        typer.Option(
            help="What confines the gates, as for `ssw run`: auto, bwrap, unshare or none."
        ),
    ] = "auto",
    network: Annotated[
        bool,
        typer.Option("--network", help="Let the gates reach the network, as `ssw run --network`."),
    ] = False,
) -> None:
    """Run the repository's gates outside a task, as a run runs them (its sandbox and
    environment), and print the verdicts (exit 1 if one fails)."""
    from stepswitch.cli.gates import gates_command

    text, code = gates_command(path, list(changed or []), sandbox, network)
    typer.echo(text)
    raise typer.Exit(code)


def _parse_tags(tags: list[str]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for tag in tags:
        key, sep, value = tag.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--tag {tag!r} is not KEY=VALUE, e.g. --tag team=search")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


@app.command("ledger")
def ledger_report(
    ledger: Annotated[
        Path | None,
        typer.Option(help="The SQLite ledger (default: $SSW_LEDGER, else .ssw/ledger.sqlite)."),
    ] = None,
    run_id: Annotated[str | None, typer.Option("--run", help="Only this run.")] = None,
    by: Annotated[
        str, typer.Option(help="Group by model, step_type, task, worker or tag.")
    ] = "model",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Calls, tokens (cached share) and dollars per group, with ranges where usage was lost."""
    import os

    from stepswitch.ledger import ledger_command

    if by not in ("model", "step_type", "task", "worker", "tag"):
        raise UsageError(f"--by {by!r}: use model, step_type, task, worker or tag")
    path = ledger or Path(os.environ.get("SSW_LEDGER") or ".ssw/ledger.sqlite")
    typer.echo(ledger_command(path, run_id, by, as_json))


@app.command()
def run(
    path: Annotated[Path, typer.Argument(help="The repository (its checkout is never touched).")],
    policy: Annotated[
        Path | None,
        typer.Option(
            help="A policy file, e.g. .ssw/policy.toml from `ssw init` (--continue: the "
            "earlier run's)."
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="PROVIDER:MODEL_ID on every step, instead of --policy.")
    ] = None,
    base_url: BaseUrlOption = None,
    price_usd_per_mtok: PriceOption = None,
    task: Annotated[str | None, typer.Option(help="What to do, in words.")] = None,
    task_file: Annotated[Path | None, typer.Option(help="Read the task from this file.")] = None,
    budget_usd: Annotated[float | None, typer.Option(help="Stop before passing this.")] = None,
    max_steps: Annotated[int | None, typer.Option(help="At most this many model calls.")] = None,
    script: Annotated[
        Path | None,
        typer.Option(
            help="Replies for workers on the scripted provider; a script from --record replays "
            "its run (its own policy unless --policy)."
        ),
    ] = None,
    record_to: Annotated[
        Path | None,
        typer.Option(
            "--record", help="Write every model reply to this file: a script that replays the run."
        ),
    ] = None,
    ledger: Annotated[
        Path | None,
        typer.Option(
            help="The SQLite ledger (default: $SSW_LEDGER, else PATH/.ssw/ledger.sqlite)."
        ),
    ] = None,
    tag: Annotated[
        list[str] | None, typer.Option(help="KEY=VALUE for cost attribution (repeatable).")
    ] = None,
    sandbox: Annotated[
        str,
        typer.Option(
            help="What confines the agent's commands and the gates: auto, bwrap, unshare or none."
        ),
    ] = "auto",
    allow_dirty: Annotated[
        bool,
        typer.Option(
            "--allow-dirty",
            help="Run although PATH has uncommitted changes: left out, said and recorded.",
        ),
    ] = False,
    network: Annotated[
        bool,
        typer.Option("--network", help="Let the agent's commands and the gates reach the network."),
    ] = False,
    continue_from: Annotated[
        str | None,
        typer.Option(
            "--continue",
            metavar="ID",
            help="Go on from run ID (interrupted, limit or error) where it stopped: its change, "
            "task, policy, plan and summaries, on its rung; its dollars count against the "
            "budget. Flags given now win.",
        ),
    ] = None,
    replan: Annotated[
        bool,
        typer.Option(
            "--replan", help="With --continue: plan and explore again instead of going on."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print run.json at the end.")] = False,
    trust_endpoint: TrustEndpoints = None,
) -> None:
    """Run a task in a git worktree of PATH on a new branch ssw/<run-id>; commit the change.
    PATH must have no uncommitted changes (they would be left out) unless --allow-dirty."""
    from stepswitch.agent.task_input import read_task_file
    from stepswitch.cli.live import progress_output
    from stepswitch.cli.run import RunOptions, run_local
    from stepswitch.registry.trust import Trust
    from stepswitch.util.text import escape_json_controls

    if task is not None and task_file is not None:
        raise UsageError("give the task with one of --task TEXT or --task-file F, not both")
    if task is None and task_file is None and continue_from is None:
        raise UsageError("give the task with exactly one of --task TEXT or --task-file F")
    if replan and continue_from is None:
        raise UsageError("--replan goes with --continue ID")
    if task_file is not None:
        task = read_task_file(task_file)
    options = RunOptions(
        repo=path,
        task=task or "",
        policy_path=policy,
        budget_usd=budget_usd,
        max_steps=max_steps,
        script=script,
        record=record_to,
        ledger_path=ledger,
        tags=_parse_tags(tag or []),
        sandbox=sandbox,
        allow_dirty=allow_dirty,
        network=network,
        model=model,
        base_url=_checked_url("--base-url", base_url),
        price=given_price(price_usd_per_mtok),
        continue_from=continue_from,
        replan=replan,
        trust=Trust.named(trust_endpoint).with_url(base_url),  # a URL typed is the user's word
    )
    with progress_output(as_json) as (print_line, sinks):
        record = run_local(options, print_line, extra_sinks=sinks)
    if as_json:
        typer.echo(escape_json_controls(record.model_dump_json(indent=2)))
    raise typer.Exit(record.exit_code or 0)


@app.command()
def demo(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Where to put the sample (default: a temp folder).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print run.json at the end.")] = False,
    sandbox: Annotated[
        str, typer.Option(help="auto, bwrap, unshare or none: what confines the commands.")
    ] = "auto",
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo",
            help="Instead of the sample: a scripted tour of your own repository (canned "
            "replies, no edit, its real gates).",
        ),
    ] = None,
    task: Annotated[
        str | None, typer.Option(help="With --repo: the task the tour is given.")
    ] = None,
) -> None:
    """A full task on a sample repository with a SCRIPTED model: no key, no network needed.
    With --repo PATH, a scripted tour of your own repository instead."""
    from stepswitch.cli.demo import run_demo, run_tour, tour_exit_code
    from stepswitch.cli.live import progress_output
    from stepswitch.util.text import escape_json_controls

    if repo is not None and directory is not None:
        raise UsageError("give --repo PATH (your repository) or --dir D (the sample's), not both")
    if task is not None and repo is None:
        raise UsageError("--task goes with --repo PATH (the sample has its own task)")
    if directory is not None and directory.exists() and not directory.is_dir():
        raise UsageError(f"--dir {directory} is a file (fix: pick a new folder for the demo)")
    with progress_output(as_json) as (print_line, sinks):
        if repo is not None:
            record = run_tour(repo, print_line, sandbox, sinks, task)
        else:
            record = run_demo(directory, print_line, sandbox, sinks)
    if as_json:
        typer.echo(escape_json_controls(record.model_dump_json(indent=2)))
    raise typer.Exit(tour_exit_code(record) if repo is not None else record.exit_code or 0)


def _command_names(exc: ClickException) -> list[str]:
    """The subcommands the error belongs to, e.g. ["bench", "run"]: from its context, or, when
    Click raised it without one (an option missing its value), read off the command line."""
    names = []
    ctx = exc.ctx if isinstance(exc, ClickUsageError) else None
    if ctx is not None:
        while ctx.parent is not None:
            names.append(ctx.info_name or "")
            ctx = ctx.parent
        return names[::-1]
    commands = getattr(click_command(), "commands", {})
    for arg in sys.argv[1:]:
        if arg not in commands:
            break
        names.append(arg)
        commands = getattr(commands[arg], "commands", {})
    return names


def usage_line(exc: ClickException) -> str:
    """Click's usage error as the one line the CLI prints, with where to read the usage:
    `(see ssw bench run --help)`, whatever name Python was started as."""
    where = " ".join(["ssw", *_command_names(exc)])
    return UsageError(f"{exc.format_message()} (see {where} --help)").message  # one line


@functools.cache
def click_command() -> Any:
    """The Click command Typer makes of `app`: about 60 ms of reading every command's
    signature, made once per process (a usage error needs it again to name the command)."""
    return typer.main.get_command(app)


def main() -> None:
    # standalone_mode=False: Click's usage errors come here instead of printing a usage block,
    # so every error the user sees is the same one line. (`app(...)` would make the Click
    # command anew; with pretty_exceptions_enable=False it adds nothing else.)
    try:
        code = click_command()(standalone_mode=False)
    except ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `ssw bench` alone: its help, as before
            exc.show()
            sys.exit(exc.exit_code)
        print(f"ssw: {usage_line(exc)}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except typer.Abort:
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    except SswError as exc:
        print(f"ssw: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
