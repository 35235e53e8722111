"""`ssw bench cluster-certs DIR`, and what `ssw bench run --scheduler` does before it sends a task
run: the address and its credentials checked, the workers checked, notices said (ADR 0049)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stepswitch.errors import UsageError
from stepswitch.util.text import escape_controls

if TYPE_CHECKING:
    from stepswitch.bench.cluster_access import SchedulerAccess
    from stepswitch.bench.contestants import Contestant


def cluster_certs(
    folder: Annotated[Path, typer.Argument(help="A new or empty folder for the certificates.")],
    host: Annotated[
        str, typer.Option(help="The scheduler's host name or address, for the printed lines.")
    ] = "SCHEDULER-HOST",
    port: Annotated[int, typer.Option(min=1, max=65535, help="The scheduler's port.")] = 8786,
) -> None:
    """Make a certificate authority and certificates for a Dask cluster's scheduler, workers and
    this client (keys 0600, with the openssl command), and print the command lines that start a
    cluster with them: only a holder of one can reach the scheduler, run code on the workers, or
    see the keys the task runs carry."""
    from stepswitch.bench.cluster_certs import make_certs, start_lines

    certs = make_certs(folder)
    typer.echo(escape_controls(f"{folder}: a CA and certificates for scheduler, worker, client"))
    typer.echo(escape_controls(start_lines(certs, host, port)), nl=False)


def scheduler_access(
    address: str | None, certs: Path | None, insecure: bool
) -> SchedulerAccess | None:
    """The scheduler checked before anything runs (a UsageError: exit 2), its notice said;
    None for a bench run here."""
    from stepswitch.bench.cluster_access import INSECURE_NOTICE, scheduler_access

    if address is None:
        if certs is not None or insecure:
            raise UsageError(
                "--cluster-certs and --insecure-loopback-scheduler go with --scheduler"
            )
        return None
    access = scheduler_access(address, certs, insecure_loopback=insecure)
    if access.certs is None:
        typer.echo(INSECURE_NOTICE, err=True)
    return access


def connect_cluster(access: SchedulerAccess, contestants: list[Contestant]) -> Any:
    """A client of the checked scheduler, every worker on this ssw; a notice per worker that
    holds keys of its own (it needs none: each task run brings its own)."""
    from stepswitch.bench.cluster import cap_usd, connect, workers_holding_keys

    for c in contestants:
        cap_usd(c)  # a UsageError for a policy without [limits] budget_usd
    client = connect(access)  # every worker on this ssw, or a UsageError
    for worker, names in workers_holding_keys(client).items():
        typer.echo(
            escape_controls(
                f"ssw: worker {worker} holds {', '.join(names)} in its environment for its whole "
                "life; start workers without keys: each task run brings the ones it needs"
            ),
            err=True,
        )
    return client
