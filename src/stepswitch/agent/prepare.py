"""One assembly of what a run acts in, for every entry point: `ssw run` (and `ssw demo` through
it), the bench's task run, bench/perf, and `ssw gates`, which prepares as a run does and then
runs the gates, so its verdict is the run's (docs/decisions/0056-one-assembly-of-a-run.md).

From the tree the run acts in (a run's worktree, a bench's fresh copy, or for `ssw gates` the
checkout itself) `prepare_run` makes the rest: the gates read at the base commit, the sandbox
and its policy, the allow-listed environment, the workspace the tools act on, and the gates'
verdict on the untouched tree (the pre-flight)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

import stepswitch
from stepswitch.agent.preflight_beside import PreflightBeside
from stepswitch.agent.repo_gates import RepoGates
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.errors import ConfigError
from stepswitch.gates.detect import load_gates
from stepswitch.gates.interpreter import find_interpreter, gate_environment
from stepswitch.gates.lang.toolchain_view import toolchain_view
from stepswitch.gates.plugins import ask_plugins_early
from stepswitch.gates.test_config import config_folder
from stepswitch.gates.truth_paths import protected_paths
from stepswitch.gates.warm import WarmPytest, WarmStarter
from stepswitch.registry.presets import ProviderSpec, key_variables
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.keys import secrets_notice
from stepswitch.util.sandbox import (
    NONE_NOTICE,
    Confinement,
    Sandbox,
    child_env,
    policy_for_worktree,
)

if TYPE_CHECKING:  # the step machine (providers, ledger, httpx) is not for `ssw gates` to import
    from stepswitch.agent.machine import GateRunner

G = TypeVar("G", bound="GateRunner", covariant=True)


@dataclass(frozen=True)
class PreparedRun(Generic[G]):
    """What a run acts in, ready before its first paid call. `prepare_run` makes one; a library
    caller may make its own, of its own workspace and gate runner."""

    workspace: Workspace  # the work tree the tools act on, with its sandbox and environment
    gates: G  # read at the base commit
    baseline: Sequence[Mapping[str, object]] = ()  # each gate's verdict before any edit
    tree: TreeGit | None = None  # the work tree's git, named outright; None: the checkout's own
    repo_root: Path | None = None  # the user's checkout: paths in the record are relative to it
    registry: Mapping[str, ProviderSpec] | None = None  # None: the shipped presets, loaded
    # The pre-flight still to run beside the plan's call (`ssw run`'s first run of a commit)
    beside: PreflightBeside | None = None


def prepare_run(
    checkout: Path,
    *,
    repo: Path,
    tree: TreeGit | None,
    sandbox: Sandbox,
    home: Path,
    registry: Mapping[str, ProviderSpec],
    cleanup: ExitStack,
    log_dir: Path | None = None,
    network: bool = False,
    preflight: bool = True,
    start_warm: WarmStarter = WarmPytest,
    run_id: str = "",
    beside_plan: bool = False,
) -> PreparedRun[RepoGates]:
    """Prepare a run in `checkout`: a work tree of `repo` whose git `tree` names (a run's), a
    fresh copy where both are the same folder (a bench's), or with `tree=None` a checkout judged
    as it is, against HEAD (`ssw gates`). `repo`'s own folder is hidden from the sandbox but for
    its virtual environment, which stays readable. Runs the gates' pre-flight
    unless `preflight=False` (bench/perf, which times the loop, and `ssw gates`, whose gate run
    is the verdict). `cleanup` ends the gates' warm pytest; `home` is the commands' HOME. A
    `run_id` (`ssw run`'s) lets the pre-flight reuse the baseline an earlier run of the same base
    commit kept in the same environment, and keep its own (`gates.baseline_store`). With
    `beside_plan` and no kept baseline, the pre-flight's gates are left to `run_task` to run
    beside the plan's call (`beside`, ADR 0088); its checks that need no command are made here
    all the same."""
    config = load_gates(checkout)  # read once, at the base commit: edits cannot move them
    env = child_env(os.environ, home)  # an allow-list: no key, token or password
    # A Rust or Go toolchain in the user's home, which the sandbox hides (ADR 0073).
    toolchains = toolchain_view(config, os.environ, Path.home())
    env.update(toolchains.env)
    # ssw's own package stays readable inside: the gates load its pytest plugin from there; and
    # the copies of the base commit's pytest configuration the test stages read (ADR 0021).
    package = Path(stepswitch.__file__).resolve().parent
    shown: tuple[Path, ...] = (package, config_folder())
    # A Node package's node_modules stays readable inside too, as the venv does: a run's
    # worktree has none (git does not track it), and node and npm find the checkout's as they
    # walk up from the worktree (gates/lang/node_project.py `lent_node_modules`).
    if (repo / "node_modules").is_dir() and checkout.resolve() != repo.resolve():
        shown += (repo / "node_modules",)
    confinement = Confinement(
        sandbox,
        policy_for_worktree(
            checkout, repo, home, env, network=network, read_only=(*shown, *toolchains.read_only)
        ),
    )
    workspace = Workspace(
        checkout,
        protected=protected_paths(config),
        secret_env_names=key_variables(registry),
        confinement=confinement,
        # The run tool sees the gates' environment: the checkout's code first on the path.
        env=gate_environment(checkout, env, find_interpreter(checkout, env)),
    )
    base = tree.base_commit if tree is not None else "HEAD"
    gates = RepoGates(
        config, checkout, env, base, log_dir, confinement, tree=tree, start_warm=start_warm
    )
    cleanup.callback(gates.close)
    if not (config.gates and preflight):
        return PreparedRun(workspace, gates, [], tree, repo, registry)
    begun = gates.begin_preflight(run_id=run_id)
    if beside_plan and begun.kept is None:
        beside = PreflightBeside(gates, begun)
        cleanup.callback(beside.stop)  # before gates.close: a run ended early leaves no gate
        return PreparedRun(workspace, gates, [], tree, repo, registry, beside)
    baseline = gates.settle(begun.finish())
    return PreparedRun(workspace, gates, list(baseline.records()), tree, repo, registry)


def ask_gates_early(repo: Path, worktree: Path, home: Path) -> None:
    """Before a run's worktree at `worktree` is made: ask the gates' interpreter (as
    `prepare_run` will find it for a worktree of `repo`), on a thread, the one probe that says
    which pytest plugins it declares and which modules it provides, so that the pre-flight's
    first gate and the first gate run after an edit find the answer ready (ADR 0084, ADR
    0091). A bad `python` setting is left for `prepare_run` to refuse."""
    try:
        python = find_interpreter(repo, child_env(os.environ, home)).python
    except ConfigError:
        return
    ask_plugins_early(python, worktree)


def unconfined_notices(sandbox: Sandbox, home: Path) -> list[str]:
    """What a run or `ssw gates` says first when nothing confines the commands: that, and which
    secrets their environment still holds (none, as a rule: it is an allow-list)."""
    if sandbox.confines:
        return []
    return [NONE_NOTICE, secrets_notice(child_env(os.environ, home))]
