"""One way to set a run's workspace up, for `ssw run` and the bench alike: the gates read at the
base commit, the sandbox and its policy, the allow-listed environment, the pre-flight."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import stepswitch
from stepswitch.agent.repo_gates import RepoGates
from stepswitch.agent.workspace.paths import Workspace
from stepswitch.gates.config import protected_paths
from stepswitch.gates.detect import load_gates
from stepswitch.gates.interpreter import find_interpreter, gate_environment
from stepswitch.gates.test_config import config_folder
from stepswitch.registry.presets import ProviderSpec, key_variables
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.sandbox import Confinement, Sandbox, child_env, policy_for_worktree


@dataclass(frozen=True)
class RunWorkspace:
    workspace: Workspace
    gates: RepoGates
    baseline: list[dict[str, Any]]  # each gate's verdict on the untouched tree (GateRecord)


def set_up_workspace(
    checkout: Path,
    *,
    repo: Path,
    home: Path,
    sandbox: Sandbox,
    registry: Mapping[str, ProviderSpec],
    tree: TreeGit,
    log_dir: Path | None,
    network: bool = False,
    preflight: bool = True,
) -> RunWorkspace:
    """The workspace and gates for a run in `checkout` (a work tree of `repo`, or a fresh copy
    where both are the same folder), whose git `tree` names; runs the gates' pre-flight before
    any paid call (`ssw run` and the bench always do; `preflight=False` is for bench/perf,
    which times the loop)."""
    config = load_gates(checkout)  # read once, at the base commit: edits cannot move them
    env = child_env(os.environ, home)  # an allow-list: no key, token or password
    # ssw's own package stays readable inside: the gates load its pytest plugin from there; and
    # the copies of the base commit's pytest configuration the test stages read (ADR 0021).
    package = Path(stepswitch.__file__).resolve().parent
    shown = (package, config_folder())
    confinement = Confinement(
        sandbox,
        policy_for_worktree(checkout, repo, home, env, network=network, read_only=shown),
    )
    workspace = Workspace(
        checkout,
        protected=protected_paths(config),
        secret_env_names=key_variables(registry),
        confinement=confinement,
        # The run tool sees the gates' environment: the checkout's code first on the path.
        env=gate_environment(checkout, env, find_interpreter(checkout, env)),
    )
    gates = RepoGates(config, checkout, env, tree.base_commit, log_dir, confinement, tree=tree)
    baseline = gates.preflight() if config.gates and preflight else None
    return RunWorkspace(workspace, gates, list(baseline.records()) if baseline else [])
