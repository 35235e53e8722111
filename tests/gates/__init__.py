"""Tests of the gates: fixture repositories are written into tmp_path by
`tests.harness.repo.write_repo`; here what several gates tests share besides."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from stepswitch.gates.config import GateConfig, GateSpec
from stepswitch.gates.suite import GateSuite
from stepswitch.util.sandbox import Confinement, Sandbox, policy_for_worktree


def lock_freed(path: Path, timeout_s: float) -> bool:
    """Whether the flock on `path` is free within `timeout_s` (a thread blocks in flock)."""
    got = threading.Event()

    def take() -> None:
        with open(path, "a") as file:
            fcntl.flock(file, fcntl.LOCK_EX)
            got.set()

    threading.Thread(target=take, daemon=True).start()
    return got.wait(timeout_s)


def scratch_env(home: Path, **more: str) -> dict[str, str]:
    """An environment a test builds from nothing for the gates or a plain pytest: this PATH,
    HOME at `home`, `more`, and the plugins tests/conftest.py leaves out left out."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), **more, **left_out_plugins()}


def left_out_plugins() -> dict[str, str]:
    """PYTEST_ADDOPTS as tests/conftest.py set it (the plugins no fixture repository uses left
    out), for an environment a test builds from nothing: without it each pytest the gates start
    there loads anyio's and xdist's plugins, 0.15 to 1 s of each start."""
    words = os.environ.get("PYTEST_ADDOPTS")
    return {"PYTEST_ADDOPTS": words} if words else {}


def confined_suite(
    tmp_path: Path, root: Path, gate: GateSpec, sandbox: Sandbox, read_only: Iterable[Path] = ()
) -> GateSuite:
    """`gate` alone on `root`, confined in `sandbox` with the policy a run gives the gates
    (`read_only` folders read-only inside), HOME and TMPDIR of its own under tmp_path."""
    home = tmp_path / "home"
    (home / "tmp").mkdir(parents=True)
    env = scratch_env(home, TMPDIR=str(home / "tmp"))
    policy = policy_for_worktree(root, root, home, env, read_only=read_only)
    return GateSuite(
        GateConfig((gate,), "test"),
        root,
        env,
        state_dir=tmp_path / "state",
        confinement=Confinement(sandbox, policy),
    )
