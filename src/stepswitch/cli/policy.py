"""`ssw policy check` (which worker takes each step, without calling a model) and `ssw policy
suggest` (the cheapest worker per step type that the step records say clears a floor)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stepswitch.errors import UsageError

policy_app = typer.Typer(
    rich_markup_mode=None, help="Policy files: which worker takes which step.", no_args_is_help=True
)


@policy_app.command("check")
def policy_check(
    path: Annotated[Path, typer.Argument(help="A policy file, e.g. bench/policies/x.toml.")],
    runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--runs",
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
        typer.Argument(help="Run records: .ssw/runs, or run folders."),
    ] = None,
    policy_path: Annotated[
        Path | None,
        typer.Option("--policy", help="The policy to improve on (required)."),
    ] = None,
    bench: Annotated[
        list[Path] | None,
        typer.Option("--bench", help="A bench run folder (repeatable)."),
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
        typer.Option("--out", help="Write the suggested policy here."),
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
