"""`ssw run`: check the inputs, say what the run will be (its header), check the keys beside the
pre-flight, make the worktree, open the ledger, start the scripted server if the policy uses it,
call `run_task`, and remove the worktree once its branch holds all of it (else it stays, said
so). Exit codes: util/exit_codes.py."""

from __future__ import annotations

import gc
import os
import secrets
import shutil
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from stepswitch.agent.events import Progress, Sink
from stepswitch.agent.key_check import KeyChecker, key_checks
from stepswitch.agent.prepare import (
    PreparedRun,
    ask_gates_early,
    prepare_run,
    unconfined_notices,
)
from stepswitch.agent.providers import HttpProviders, ProviderFactory
from stepswitch.agent.repo_gates import RepoGates
from stepswitch.agent.run import RunExtras, run_task
from stepswitch.agent.worker_prices import price_workers
from stepswitch.agent.workers import check_keys, is_scripted, worker_models
from stepswitch.agent.workspace.continued import (
    Continued,
    find_continued,
    spent_notice,
    take_up,
)
from stepswitch.agent.workspace.runs import abandoned_notice
from stepswitch.agent.workspace.stops import run_ending, sigterm_interrupts
from stepswitch.agent.workspace.worktree import (
    Worktree,
    check_clean,
    check_top,
    create_worktree,
    dirty_notice,
    discard_worktree,
    exclude_ssw_folder,
    leave_worktree,
    some_paths,
    worktree_path,
)
from stepswitch.cli.otel import otel_sinks
from stepswitch.cli.render import TerminalPrinter, escaped
from stepswitch.cli.run_header import header_lines
from stepswitch.cli.run_policy import run_policy
from stepswitch.errors import Interrupted, UsageError
from stepswitch.fakes.scripted import Script, load_script, start_scripted_server
from stepswitch.gates.detect import load_gates
from stepswitch.gates.plugins import end_early_probes
from stepswitch.gates.warm import WarmPytest, WarmStarter
from stepswitch.ledger import Budget, Ledger, open_ledger
from stepswitch.policy.model import Policy
from stepswitch.records.folder import RunFolder
from stepswitch.records.run import PricesRead, RunIds, RunRecord
from stepswitch.registry.first_use import PricesReading
from stepswitch.registry.presets import SCRIPTED_PROVIDER, Price, ProviderSpec, load_registry
from stepswitch.registry.trust import Trust, check_destinations, worker_destinations
from stepswitch.sim.bench_only import refuse_simulated
from stepswitch.util.git import Checkout
from stepswitch.util.keys import held_keys
from stepswitch.util.proc import kill_live_groups
from stepswitch.util.sandbox import Sandbox, choose_sandbox, sandbox_home


@dataclass(frozen=True)
class RunOptions:
    repo: Path
    task: str  # "" with continue_from: the earlier run's
    policy_path: Path | None  # or `model`; neither with continue_from: the earlier run's
    budget_usd: float | None = None
    max_steps: int | None = None
    script: Path | None = None  # replies for workers on the scripted provider
    ledger_path: Path | None = None  # None: $SSW_LEDGER, else <repo>/.ssw/ledger.sqlite
    tags: tuple[tuple[str, str], ...] = ()  # team, feature, customer...: for cost attribution
    sandbox: str = "auto"  # auto | bwrap | unshare | none (util/sandbox.py, ADR 0010)
    allow_dirty: bool = False  # run on a checkout with uncommitted changes (they are left out)
    network: bool = False  # let what the agent and the gates run reach the network
    model: str | None = None  # PROVIDER:MODEL_ID: a one-model policy built in memory
    base_url: str | None = None  # with `model`: where its calls go instead of the preset's
    price: Price | None = None  # --price-usd-per-mtok: the one model's price, given
    continue_from: str | None = None  # an earlier run's id (agent/workspace/continued.py)
    replan: bool = False  # with continue_from: plan and explore again instead of going on
    record: Path | None = None  # write the replies as a script that replays the run (ADR 0036)
    trust: Trust = field(default_factory=Trust)  # hosts the user trusts with a key (ADR 0048)
    start_warm: WarmStarter = WarmPytest  # what starts the gates' warm pytest (a library hook)


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def provider_env() -> dict[str, str]:
    """Where provider keys come from: the environment ssw started with, including the keys
    `ssw`'s start took out of it (util.keys) so no child can read them."""
    return {**os.environ, **held_keys()}


def ledger_path(options: RunOptions, repo: Path) -> Path:
    if options.ledger_path is not None:
        return options.ledger_path
    from_env = os.environ.get("SSW_LEDGER")
    return Path(from_env) if from_env else repo / ".ssw" / "ledger.sqlite"


def _recovered_notice(ledger: Ledger) -> str | None:
    if not ledger.recovered:
        return None
    high = sum(r.high_usd or 0.0 for r in ledger.recovered)
    return (
        f"ledger: {len(ledger.recovered)} call(s) left open by a process that ended mid-call "
        f"are now bounds (up to ${high:.4f} in all): see `ssw ledger`"
    )


@dataclass(frozen=True)
class _Checked:
    """What `ssw run` checked before making anything."""

    repo: Path
    task: str
    policy: Policy
    registry: dict[str, ProviderSpec]
    script: Script | None
    sandbox: Sandbox
    dirty: list[str]  # uncommitted paths left out (--allow-dirty)
    prices_read: list[PricesReading]  # prices read from model lists for this run
    gates: tuple[str, ...]  # the gates' names, as the pre-flight will run them
    keys: KeyChecker  # the keys' check, under way from the end of the checks
    checkout: Checkout  # found once, before any agent ran: the worktree is made from it
    continued: Continued | None = None

    @property
    def prices(self) -> list[PricesRead]:
        """The prices read, as the run's record keeps them."""
        return [
            PricesRead(provider=r.provider, url=r.url, at=r.at.isoformat(timespec="seconds"))
            for r in self.prices_read
        ]


def _check(options: RunOptions, print_line: Callable[[str], None]) -> _Checked:
    repo = options.repo.resolve()
    if not repo.is_dir():
        raise UsageError(f"{options.repo} is not a folder")
    if not (repo / ".git").exists():
        raise UsageError(f"{options.repo} is not the top of a git repository; run `git init` there")
    continued = find_continued(repo, options.continue_from) if options.continue_from else None
    task = options.task or (continued.record.task if continued else "")
    if not task.strip():
        raise UsageError("the task is empty; pass --task TEXT or --task-file F")
    checkout = check_top(repo)  # one git look, handed on to the worktree (ADR 0091)
    dirty = check_clean(repo, options.allow_dirty, checkout)  # no commits, or changes missed
    registry = load_registry()
    if options.record is not None:
        if options.script is not None:
            raise UsageError("give --record FILE or --script FILE, not both")
        from stepswitch.fakes.recording import check_record_path  # --record only

        check_record_path(options.record)
    given_script = load_script(options.script) if options.script is not None else None
    policy = run_policy(options, registry, continued, given_script)
    refuse_simulated(policy)
    script = None
    if is_scripted(policy):
        if given_script is None:
            raise UsageError("this policy uses the scripted provider: pass --script F.yaml")
        script = given_script
    elif given_script is not None:  # never ignored without a word
        raise UsageError(
            f"--script {options.script}: no worker of this policy is on the scripted provider, "
            "so no reply of it would be used; drop --policy/--model to replay a recorded run"
        )
    keys = check_destinations(worker_destinations(policy.workers, registry), options.trust)
    if keys:  # before the first request that carries a key: the prices read on first use
        print_line(keys)
    # each model priced for its host, read where needed (the user's cache, ADR 0061); an
    # unpriced or unknown model refuses before anything is made
    env = provider_env()  # this process's environment and the keys ssw's start held back
    priced = price_workers(policy, registry, env, options.trust, options.price)
    registry, prices_read = priced.registry, priced.read
    models = worker_models(policy, registry, env)
    check_keys(policy, registry, env)
    gates = load_gates(repo)  # a bad gate table refuses before the worktree is made
    sandbox = choose_sandbox(options.sandbox)  # a sandbox that cannot run refuses here too
    # Each key asked of its host now, beside what follows (the pre-flight the longest of it).
    checker = KeyChecker(key_checks(policy, registry, models, env, options.trust))
    names = tuple(gate.name for gate in gates.gates)
    checks = (repo, task, policy, registry, script, sandbox, dirty, prices_read, names, checker)
    return _Checked(*checks, checkout, continued)


@dataclass
class _Left:
    """What the end of `ssw run` left behind, for the line an interrupted set-up prints."""

    worktree: Worktree | None = None
    kept: str | None = None  # why something stays, when it does


def run_local(
    options: RunOptions,
    print_line: Callable[[str], None],
    extra_sinks: tuple[Sink, ...] = (),
) -> RunRecord:
    """`ssw run` as a function: everything checked before anything is made; at every end the
    worktree goes only when its branch holds all it has, and a run stopped or refused before
    its first record takes its branch with it."""
    checked = _check(options, print_line)
    folder = RunFolder(checked.repo / ".ssw" / "runs" / new_run_id())
    for line in header_lines(checked.repo, f"ssw/{folder.root.name}", checked.policy):
        escaped(print_line)(line)  # the repository's path and the policy's names are text
    left = _Left()
    with sigterm_interrupts(), run_ending("cleaning up after the run") as ending:
        try:
            with ExitStack() as cleanup:  # undone in reverse
                try:
                    sinks = (TerminalPrinter(print_line), *extra_sinks, *otel_sinks())
                    return _run(options, checked, folder, sinks, print_line, cleanup, left)
                finally:
                    ending.begin()  # from here on no signal interrupts the clean-up
        except KeyboardInterrupt as exc:
            if not folder.run_path.exists():  # stopped before the run's first record
                print_line(_set_up_stopped(exc, left))
            raise
    raise AssertionError("unreachable")  # ExitStack re-raises; mypy cannot see it


def _run(
    options: RunOptions,
    checked: _Checked,
    folder: RunFolder,
    sinks: tuple[Sink, ...],
    print_line: Callable[[str], None],
    cleanup: ExitStack,
    left: _Left,
) -> RunRecord:
    policy, run_id, continued = checked.policy, folder.root.name, checked.continued
    show = escaped(print_line)  # notices name files of the repository, which may hold controls
    exclude_ssw_folder(checked.repo, checked.checkout.exclude)  # before anything lands in .ssw/
    ledger = open_ledger(ledger_path(options, checked.repo))
    cleanup.callback(ledger.close)
    _notices(checked, ledger, show)
    providers = _providers(options, checked, cleanup)
    prepared, worktree = _prepare(options, checked, folder, cleanup, left, show, sinks)
    # After the pre-flight, which judges the base commit's files.
    resume = take_up(continued, worktree.git, options.replan, policy, show) if continued else None
    # Modules, registry, policy and gate config live as long as the process: no garbage
    # collection needs to walk them again during the run (about 40,000 objects).
    gc.freeze()
    task_id = continued.record.ids.task_id if continued else run_id
    limit = policy.limits.budget_usd
    record = run_task(
        prepared,
        task=checked.task,
        policy=policy,
        ledger=ledger,
        folder=folder,
        ids=RunIds(run_id=run_id, task_id=task_id),
        budgets=(Budget("task", task_id, limit),) if limit is not None else (),
        providers=providers,
        deadline=time.monotonic() + policy.limits.wall_time_s,
        extras=RunExtras(
            sinks=sinks,
            tags=dict(options.tags),
            resume=resume,
            prices_read=checked.prices,
            allow_dirty=bool(checked.dirty),
        ),
    )
    refusal = prepared.beside.refusal if prepared.beside is not None else None
    if refusal is not None:  # the pre-flight beside the plan refused: said as any refusal is
        raise refusal
    return record


def _prepare(
    options: RunOptions,
    checked: _Checked,
    folder: RunFolder,
    cleanup: ExitStack,
    left: _Left,
    show: Callable[[str], None],
    sinks: tuple[Sink, ...],
) -> tuple[PreparedRun[RepoGates], Worktree]:
    """The run's worktree on its new branch (`--continue`: at the earlier run's base), and the
    run prepared in it; the worktree goes at the end only when its branch holds all it has.
    A key refused before the worktree is made refuses the run with nothing made; one refused
    during the pre-flight, once it ends (the worktree and branch then go, as for any refusal)."""
    continued = checked.continued
    checked.keys.refuse_if_refused()
    home = cleanup.enter_context(sandbox_home())
    if checked.gates:  # asked while the worktree is made: the pre-flight's first gate needs it
        ask_gates_early(checked.repo, worktree_path(checked.repo, folder.root.name), home)
        cleanup.callback(end_early_probes)  # a run refused before its pre-flight leaves no thread
    worktree = create_worktree(
        checked.repo,
        folder.root.name,
        base=continued.record.base_commit if continued else None,
        start=continued.tip if continued else None,
        checkout=checked.checkout,
    )
    left.worktree = worktree
    cleanup.callback(_leave, worktree, folder, show, left)
    for notice in unconfined_notices(checked.sandbox, home):
        show(notice)  # the commands' environment as prepare_run makes it: the secrets they read
    if checked.gates:  # on the live line, or a plain line in a pipe, until the run starts
        preflight = Progress(
            "gates", f"pre-flight: gates {', '.join(checked.gates)} before any edit"
        )
        for sink in sinks:
            sink.on_event(preflight)
    prepared = prepare_run(
        worktree.path,
        repo=checked.repo,
        tree=worktree.git,
        sandbox=checked.sandbox,
        home=home,
        registry=checked.registry,
        cleanup=cleanup,
        log_dir=folder.logs,
        network=options.network,
        start_warm=options.start_warm,
        run_id=folder.root.name,
        # A first run of a commit sends the plan's call beside the gates (ADR 0088); a continued
        # run takes up its earlier run's work after the pre-flight, as before.
        beside_plan=continued is None,
    )
    for notice in checked.keys.settle():
        show(notice)
    return prepared, worktree


def _notices(checked: _Checked, ledger: Ledger, show: Callable[[str], None]) -> None:
    """What the run's start says before anything is made in the checkout."""
    continued = checked.continued
    if continued is not None:  # its calls count against the same task budget: one task id
        show(spent_notice(continued, ledger, checked.policy.limits.budget_usd))
    for notice in (
        *(read.line for read in checked.prices_read),
        _recovered_notice(ledger),
        abandoned_notice(checked.repo),
        dirty_notice(checked.repo, checked.dirty) if checked.dirty else None,
    ):
        if notice:
            show(notice)


def _providers(options: RunOptions, checked: _Checked, cleanup: ExitStack) -> ProviderFactory:
    """The workers' providers over HTTP: the scripted server's address when the policy uses
    it, and every reply written to a script with --record."""
    base_urls: dict[str, str] = {}
    if checked.script is not None:
        server, _ = start_scripted_server(checked.script)
        cleanup.callback(server.stop)
        base_urls[SCRIPTED_PROVIDER] = server.base_url
    http = HttpProviders(
        checked.registry, env=provider_env(), base_urls=base_urls, trust=options.trust
    )
    http.expect(checked.policy.workers.values())  # TLS and codecs made beside the worktree
    cleanup.callback(http.close)
    if options.record is None:
        return http
    from stepswitch.fakes.recording import Recorder, RecordingProviders  # YAML: --record only

    return RecordingProviders(http, Recorder(options.record, checked.policy, checked.task))


def _leave(worktree: Worktree, folder: RunFolder, show: Callable[[str], None], left: _Left) -> None:
    """The worktree goes only when its branch holds all it has; a run with no record (refused
    or stopped in its set-up) takes its branch and its folder along when they hold nothing."""
    if folder.run_path.exists():
        unsaved = leave_worktree(worktree)
        if unsaved:
            show(
                f"ssw: the worktree {worktree.path} stays: it holds work on no commit of "
                f"{worktree.branch} ({some_paths(unsaved)})"
            )
        return
    kill_live_groups()  # a pre-flight gate still running must not write in it any more
    left.kept = discard_worktree(worktree)
    if left.kept is not None:
        show(f"ssw: {left.kept}: it stays, with branch {worktree.branch}")
    elif folder.root.is_dir():
        shutil.rmtree(folder.root, ignore_errors=True)  # the refused pre-flight's logs only


def _set_up_stopped(exc: KeyboardInterrupt, left: _Left) -> str:
    why = exc.signal_name if isinstance(exc, Interrupted) else "Ctrl-C"
    head = f"ssw: interrupted by {why} while the run was set up, before its first step"
    if left.worktree is None:
        return f"{head}: no branch or worktree was made"
    if left.kept is not None:
        return f"{head}: {left.kept}"
    return f"{head}: its branch {left.worktree.branch} and worktree are removed"
