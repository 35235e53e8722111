"""`ssw claims register ID` / `ssw claims list`: pre-register claims before the runs they depend
on. `ssw prove [--claim ID ...] [--check]`: recompute every claim from committed evidence, offline,
write claims/evidence/<id>.json and render the README's numbers; with --check, change nothing and
exit 1 when proving would change a file, an input changed, or a claims section holds a number no
marker rendered. Exit 2 for a malformed claims.yaml, registration, README marker or evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stepswitch.errors import UsageError

CLAIMS_FILE = "claims/claims.yaml"

claims_app = typer.Typer(
    rich_markup_mode=None,
    help="Claims behind the README's numbers: register them before their runs.",
    no_args_is_help=True,
)

RootOption = Annotated[
    Path | None,
    typer.Option(
        "--root", help="The repository with claims/claims.yaml (default: this folder or above)."
    ),
]


def find_root(root: Path | None) -> Path:
    """The repository with claims/claims.yaml, which must be UTF-8 text (else one line, exit 2)."""
    return _readable(_located(root))


def _located(root: Path | None) -> Path:
    if root is not None:
        if not (root / CLAIMS_FILE).is_file():
            raise UsageError(f"{root} has no {CLAIMS_FILE}")
        return root.resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / CLAIMS_FILE).is_file():
            return folder
    raise UsageError(f"no {CLAIMS_FILE} in {here} or above: run from the repository or give --root")


def _readable(root: Path) -> Path:
    from stepswitch.util.inputs import read_text_input

    # Every command reads it as text: a binary or non-UTF-8 file is refused here, in one line.
    read_text_input(root / CLAIMS_FILE, "claims file", f"restore {CLAIMS_FILE} from git")
    return root


@claims_app.callback()
def claims() -> None:
    """Claims behind the README's numbers (claims/claims.yaml); `ssw prove` proves them."""


@claims_app.command("register")
def register_command(
    claim_id: Annotated[
        str, typer.Argument(help="A claim id from claims/claims.yaml, e.g. C-001.")
    ],
    root: RootOption = None,
) -> None:
    """Register a claim before the runs it depends on (text hash, commit, time, bounds).

    Appends to claims/registrations.yaml, a log whose earlier entries are never rewritten.
    Evidence from a run that started earlier, or measured before the registration of the bounds
    it is judged by, is refused for the claim; a claim whose text and range are unchanged keeps
    its registration. A re-registration cannot bring a new retrospective, nor change the bounds
    without changing bounds_set_by (exit 2)."""
    from stepswitch.claims.model import load_claims
    from stepswitch.claims.registration import register

    folder = find_root(root)
    loaded = load_claims(folder).get(claim_id)
    if loaded is None:
        raise UsageError(f"{claim_id}: no such claim in {CLAIMS_FILE}")
    made, before = register(folder, loaded.claim)
    if before is made:
        typer.echo(f"{claim_id}: already registered on {made.date} at {made.commit[:12]}")
        return
    if before is not None:
        what = "text" if before.text_sha256 != made.text_sha256 else "range (its evidence map)"
        typer.echo(f"{claim_id}: its {what} changed since {before.date}; registered again")
    typer.echo(f"{claim_id}: registered on {made.date} at {made.commit[:12]}")


@claims_app.command("list")
def list_command(root: RootOption = None) -> None:
    """Each claim: id, status in claims.yaml, when it was last registered, title."""
    from stepswitch.claims.model import load_claims
    from stepswitch.claims.registration import load_log

    folder = find_root(root)
    log = load_log(folder)
    for lc in load_claims(folder).claims:
        history = log.of(lc.id)
        made = history.latest
        when = "not registered" if made is None else f"registered {made.date}"
        if len(history.entries) > 1:
            when += f" ({len(history.entries)} registrations)"
        if made is not None and not made.keeps(lc.claim):
            when += " (text or evidence changed since)"
        typer.echo(f"{lc.id}  {lc.claim.status:<10}  {when:<36}  {lc.claim.title}")


def prove_command(
    claim: Annotated[
        list[str] | None,
        typer.Option(
            "--claim", help="Only this claim (repeatable); the README uses the others' files."
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Write nothing; exit 1 if proving would change a file or a check fails (CI).",
        ),
    ] = False,
    allow_shallow: Annotated[
        bool,
        typer.Option(
            "--allow-shallow",
            help="In a shallow clone that cannot be deepened, check all but the registration "
            "log's history and say so, instead of exit 2 (ADR 0078).",
        ),
    ] = False,
    root: RootOption = None,
) -> None:
    """Recompute every claim from committed evidence, offline: no key, nothing billed.

    Writes claims/evidence/<id>.json and the README's numbers between claim markers. Exit 1 when a
    claim is refused, inconsistent or not as claims.yaml declares it, or a claims section has a
    number no marker rendered; 2 for malformed claims, markers or evidence."""
    from stepswitch.claims.prove import prove, write

    folder = find_root(root)
    done = prove(folder, list(claim or []), check=check, allow_shallow=allow_shallow)
    for line in done.lines:
        typer.echo(line)
    for what in done.unchecked:
        typer.echo(f"not checked: {what}")
    if not check:
        write(folder, done)
        for rel in done.changed:
            typer.echo(f"written: {rel}")
    for problem in done.problems:
        typer.echo(f"problem: {problem}")
    if done.problems:
        raise typer.Exit(1)
    if check:
        typer.echo(f"{len(done.lines)} claims: evidence and README as proving makes them")
