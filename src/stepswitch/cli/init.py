"""`ssw init PROVIDER`: write a commented starter policy for a provider preset, check it as
`ssw policy check` does, and say the command to run next (ADR 0032)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Annotated

import typer

from stepswitch.cli.trust_option import TrustEndpoints

# Inside the user's checkout, yet out of the way: `ssw run` leaves .ssw/ out of its dirty check.
DEFAULT_OUT = Path(".ssw") / "policy.toml"


def init_command(
    provider: Annotated[str, typer.Argument(help="A provider preset, e.g. tokenfactory.")],
    out: Annotated[Path, typer.Option(help="Where to write the policy file.")] = DEFAULT_OUT,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite the file if it exists.")
    ] = False,
    trust_endpoint: TrustEndpoints = None,
) -> None:
    """Write a starter policy for PROVIDER: its cheapest model finds, reads and summarises, a
    mid-priced one edits, runs and triages, the dearest plans, reviews and takes over."""
    from stepswitch.cli.render import escaped
    from stepswitch.errors import UsageError
    from stepswitch.policy.check import check_policy, render_policy_check
    from stepswitch.policy.model import load_policy
    from stepswitch.policy.starter import starter_policy
    from stepswitch.registry.first_use import can_read_prices, key_in, read_prices
    from stepswitch.registry.in_force import with_cached_prices
    from stepswitch.registry.presets import load_registry
    from stepswitch.registry.trust import Trust
    from stepswitch.util.keys import held_keys

    show = escaped(typer.echo)
    registry = dict(load_registry())  # a copy: the prices in force replace its presets
    if provider not in registry:
        raise UsageError(
            f"unknown provider {provider!r}; known providers: {', '.join(sorted(registry))}"
        )
    if out.is_dir():
        raise UsageError(f"--out {out} is a folder, not a file (fix: name a file in it)")
    if out.exists() and not force:
        raise UsageError(f"{out} exists; pass --force to overwrite it, or --out another file")
    env = {**os.environ, **held_keys()}
    registry[provider] = spec = with_cached_prices(registry[provider])  # the user's cache first
    if not all(m.priced for m in spec.models.values()) and can_read_prices(spec, env):
        reading = read_prices(spec, None, spec.models, env, Trust.named(trust_endpoint))
        show(reading.line)  # rank by price where it can
        registry[provider] = with_cached_prices(spec)
    text = starter_policy(provider, registry)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    show(f"wrote {out}")
    show(render_policy_check(check_policy(load_policy(out, registry), registry)))
    spec = registry[provider]
    run = f'ssw run . --policy {shlex.quote(str(out))} --task "what to do"'
    if spec.api_key_env and key_in(spec, env) is None:
        show(f"next: export {spec.api_key_env}=<your {spec.display_name} key>, then {run}")
    else:
        show(f"next: {run}")
