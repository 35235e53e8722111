"""`ssw runs [--json]`: a repository's runs (id, outcome, dollars, branch, worktree present), the
dollars beside the ledger's rows for each run (a killed run's, a call in flight at the end);
`ssw runs show ID [--diff] [--json]`: what one run did, from its records and its branch;
`ssw runs apply ID [--cherry-pick]`: its commits onto the checkout's current branch;
`ssw runs clean [ID|--all] [--force]`: the worktrees and branches of finished or abandoned runs,
and the scratch folders in $TMPDIR of ssw processes that are gone.
Run records (.ssw/runs/<id>/) always stay. Exit 0; 1 when a run named by ID was not all cleaned
(work that is nowhere else, or still running) or its change does not apply cleanly; 2 for a bad
repository or ID, or a run or checkout that cannot be applied as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stepswitch.cli.options import JsonTableOption
from stepswitch.errors import UsageError

if TYPE_CHECKING:
    from stepswitch.agent.workspace.runs import RunEntry
    from stepswitch.agent.workspace.spend import LedgerRead

runs_app = typer.Typer(
    rich_markup_mode=None,
    help="A repository's runs: list them, show one, apply its change, clean up after them.",
    invoke_without_command=True,
)

RunIdArgument = Annotated[
    str, typer.Argument(metavar="ID", help="The run's id (`ssw runs` lists them).")
]
RepoOption = Annotated[
    Path | None,
    typer.Option("--repo", help="The repository (default: the one the current folder is in)."),
]
LedgerOption = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        help="The SQLite ledger, read-only (default: $SSW_LEDGER, else REPO/.ssw/ledger.sqlite).",
    ),
]


def render_runs(repo: Path, rows: list[RunEntry], spend: LedgerRead | None = None) -> str:
    from stepswitch.agent.workspace.runs import ABANDONED
    from stepswitch.ledger.tally import ever_made

    if not rows:
        return f"no runs in {repo}"
    table = [("run", "outcome", "dollars", "worktree", "branch")]
    for e in rows:
        outcome = (
            e.outcome + (" [scripted]" if e.scripted else "") + (f" (pid {e.pid})" if e.pid else "")
        )
        branch = (e.branch or "-") + (f"  ({e.problem})" if e.problem else "")
        cost = "-" if e.dollars is None else e.dollars.text()
        table.append((e.run_id, outcome, cost, "yes" if e.worktree else "no", branch))
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = [
        f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:>{widths[2]}}  {d:<{widths[3]}}  {branch}"
        for a, b, c, d, branch in table
    ]
    footer = None if spend is None else spend.footer()
    # A ledger that is there but cannot be read, or is lost (its tally is there), is said even
    # when every record was checked.
    unsaid = any(e.dollars is not None and e.dollars.note for e in rows)
    if footer and spend is not None and (unsaid or ever_made(spend.path)):
        lines.append(footer)
    left = sum(e.outcome == ABANDONED for e in rows)
    if left:
        lines.append(
            f"{left} abandoned (their ssw process is gone): `ssw runs clean --all` removes their "
            "worktrees and branches; work that is on no other branch stays unless --force"
        )
    return "\n".join(lines)


@runs_app.callback(invoke_without_command=True)
def runs(
    ctx: typer.Context,
    repo: RepoOption = None,
    ledger: LedgerOption = None,
    as_json: JsonTableOption = False,
) -> None:
    """The repository's runs: id, outcome (abandoned: its process is gone; [scripted]: its
    replies came from a script), dollars (the ledger's range where it holds more than the
    record), worktree present, branch."""
    ctx.obj = (repo, ledger)
    if ctx.invoked_subcommand is not None:
        return
    from stepswitch.agent.workspace.runs import list_runs, repo_top
    from stepswitch.agent.workspace.spend import ledger_of, read_spend

    top = repo_top(repo or Path.cwd())
    spend = read_spend(ledger_of(top, ledger))
    if ledger is not None and spend.problem is not None:
        # A ledger the user named is read, or the command says why not: never left out unsaid.
        raise UsageError(spend.problem)
    entries = list_runs(top, spend)
    if as_json:
        typer.echo(json.dumps([e.as_json(top) for e in entries], indent=2))
    else:
        typer.echo(render_runs(top, entries, spend))


def _clean_scratch() -> None:
    """The scratch folders in $TMPDIR of ssw processes that are gone (kill -9, a crash)."""
    from stepswitch.util.scratch import clean_abandoned, cleaned_notice

    notice = cleaned_notice(clean_abandoned())
    if notice:
        typer.echo(notice)


@runs_app.command("clean")
def clean(
    ctx: typer.Context,
    run_id: Annotated[str | None, typer.Argument(metavar="ID", help="One run's id.")] = None,
    all_runs: Annotated[
        bool, typer.Option("--all", help="Every run that finished or was abandoned.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also drop uncommitted changes in a worktree and branches on no other branch.",
        ),
    ] = False,
    repo: RepoOption = None,
    ledger: LedgerOption = None,
) -> None:
    """Remove the worktrees and ssw/<id> branches of finished or abandoned runs; never a running
    run, never work that is nowhere else unless --force. Records stay; an abandoned run's gets
    the ledger's range for its dollars. Also removes the scratch folders in $TMPDIR whose ssw
    process is gone."""
    from stepswitch.agent.workspace.runs import clean_runs, repo_top
    from stepswitch.agent.workspace.spend import ledger_of, read_spend

    if (run_id is None) == (not all_runs):
        raise UsageError("name one run: `ssw runs clean ID`, or every finished one with --all")
    outer_repo, outer_ledger = ctx.obj or (None, None)
    top = repo_top(repo or outer_repo or Path.cwd())
    spend = read_spend(ledger_of(top, ledger or outer_ledger))
    results = clean_runs(top, run_id, force=force, spend=spend)
    if not results:
        typer.echo(f"nothing to clean in {top}")
    for result in results:
        for what in result.removed:
            typer.echo(f"{result.run_id}: removed {what}")
        for why in result.kept:
            typer.echo(f"{result.run_id}: kept {why}")
        if not result.removed and not result.kept:
            typer.echo(f"{result.run_id}: nothing to clean (its record stays)")
    _clean_scratch()
    if run_id is not None and any(r.kept for r in results):
        raise typer.Exit(1)


@runs_app.command("show")
def show(
    ctx: typer.Context,
    run_id: RunIdArgument,
    diff: Annotated[bool, typer.Option("--diff", help="Also print the whole diff.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
    repo: RepoOption = None,
    ledger: LedgerOption = None,
) -> None:
    """What a run did, from its records: outcome (marked [scripted] when its replies came from a
    script), task, policy, each step (type, worker, model, tokens, dollars, outcome), the bill
    beside the ledger's rows, the gates' and the review's verdicts, and `git diff --stat` of its
    commit against the commit it started from (--diff: the whole diff)."""
    from stepswitch.agent.workspace.run_view import view_run
    from stepswitch.agent.workspace.runs import repo_top
    from stepswitch.agent.workspace.spend import ledger_of, read_spend
    from stepswitch.cli.render import format_run_view

    outer_repo, outer_ledger = ctx.obj or (None, None)
    top = repo_top(repo or outer_repo or Path.cwd())
    spend = read_spend(ledger_of(top, ledger or outer_ledger))
    view = view_run(top, run_id, spend, with_diff=diff)
    if as_json:
        typer.echo(json.dumps(view.as_json(), indent=2))
    else:
        typer.echo("\n".join(format_run_view(view)))


@runs_app.command("apply")
def apply(
    ctx: typer.Context,
    run_id: RunIdArgument,
    cherry_pick: Annotated[
        bool,
        typer.Option("--cherry-pick", help="Cherry-pick the run's commits instead of merging."),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Apply a run whose gates did not pass, or whose change holds links, "
            "submodules, big files, .gitattributes/.gitmodules/.lfsconfig or hooks (said first).",
        ),
    ] = False,
    max_file_mb: Annotated[
        float,
        typer.Option("--max-file-mb", help="The largest file the change may write, in MB."),
    ] = 10.0,
    repo: RepoOption = None,
) -> None:
    """Apply a finished run's commits (its branch ssw/ID) to the checkout's current branch: a
    merge commit (`git merge --no-ff`), or with --cherry-pick the commits themselves. Refuses a
    checkout with uncommitted changes or with anything git does not track (ignored or not)
    where the change writes, a run still running, one with no commit or whose branch is gone;
    unless --force, a run whose gates did not pass and the changes --force names (exit 2). A
    change that does not apply, or whose files in the checkout are not the bytes its gates ran,
    is undone, the checkout left as it was (exit 1). No hook, filter or merge driver runs."""
    from stepswitch.agent.workspace.apply import applied_lines, apply_run
    from stepswitch.agent.workspace.runs import repo_top
    from stepswitch.agent.workspace.stops import run_ending

    outer_repo, _ = ctx.obj or (None, None)
    top = repo_top(repo or outer_repo or Path.cwd())
    try:
        # Ctrl-C or SIGTERM while git merges (it runs in its own session, so it would go on and
        # land unseen): held, said at once, acted on once the merge is done or undone and the
        # lines below say which.
        with run_ending(f"applying run {run_id}") as ending:
            ending.begin()
            done = apply_run(
                top, run_id, cherry_pick=cherry_pick, force=force, max_file_mb=max_file_mb
            )
            for line in applied_lines(done):
                typer.echo(line)
    except KeyboardInterrupt:  # the held Ctrl-C, given back once the lines are out
        raise typer.Exit(130) from None
