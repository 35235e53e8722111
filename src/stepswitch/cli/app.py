"""The `ssw` command. Parse, call, print: no logic of its own. Heavy imports stay inside commands
so `ssw --help` starts fast."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from stepswitch.cli.bench import bench_app
from stepswitch.cli.claims import claims_app, prove_command
from stepswitch.cli.help import SswGroup
from stepswitch.cli.init import init_command
from stepswitch.cli.model_flags import BaseUrlOption, PriceOption, given_price
from stepswitch.cli.options import JsonTableOption, LedgerFileOption
from stepswitch.cli.policy import policy_app
from stepswitch.cli.registry import _checked_url, models, prices_app, probe
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


app.add_typer(prices_app, name="prices")
app.add_typer(policy_app, name="policy")
app.add_typer(bench_app, name="bench")
app.add_typer(runs_app, name="runs")
app.add_typer(claims_app, name="claims")
app.add_typer(site_app, name="site")
app.command("serve")(serve_command)
app.command("prove")(prove_command)
app.command("init")(init_command)
app.command()(models)
app.command()(probe)


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
    ledger: LedgerFileOption = None,
    run_id: Annotated[str | None, typer.Option("--run", help="Only this run.")] = None,
    by: Annotated[
        str, typer.Option(help="Group by model, step_type, task, worker or tag.")
    ] = "model",
    as_json: JsonTableOption = False,
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
    else:  # where to look next: the page of this run, and its records in full
        from stepswitch.agent.workspace.runs import repo_top
        from stepswitch.cli.replay_page import replay_page

        replay_page(repo_top(path), record, typer.echo, f"Stepswitch run {record.run_id}")
        typer.echo(f"details: ssw runs show {record.run_id}")
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
