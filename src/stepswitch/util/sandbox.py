"""Confinement for everything the agent and the gates run: own PID, mount and network namespaces,
the worktree writable, the system read-only, the home and the repository checkout hidden.

Backends: bubblewrap (`bwrap`), util-linux `unshare` with a user namespace, or `none`. All of them
build the same mount plan (sandbox_backends.py); see docs/decisions/0010-sandbox.md for the order
and what each protects. Here: choosing a backend that works, the policy of a run's worktree, and
`Confinement`; the children's environment is child_env.py's. Run `sandbox.argv(...)` with
`env=policy.env` and `start_new_session=True`.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.util.child_env import child_env, sandbox_home
from stepswitch.util.sandbox_backends import (
    Bwrap,
    NoSandbox,
    Sandbox,
    SandboxPolicy,
    Unshare,
    mount_plan,
)
from stepswitch.util.scratch import SANDBOX_ROOT_PREFIX, process_scratch

BACKENDS = ("bwrap", "unshare", "none")
NONE_NOTICE = (
    "sandbox: none. Commands run as you, with your files, processes and network: "
    "only the environment is cleaned (pass --sandbox auto to confine them)."
)


@functools.cache
def _stage() -> Path:
    # Mounted on only inside the sandbox's own mount namespace; the host sees an empty folder.
    # Its owner lock lets `ssw runs clean` remove it once this process is gone (util/scratch.py);
    # the tmpfs mounted on it inside hides the owner file there.
    return process_scratch(SANDBOX_ROOT_PREFIX)


def _build(name: str) -> Sandbox:
    """The backend, or UsageError naming why it cannot exist here."""
    if name == "none":
        return NoSandbox()
    if not sys.platform.startswith("linux"):
        raise UsageError(f"--sandbox {name} needs Linux; on {sys.platform} pass --sandbox none")
    if name == "bwrap":
        binary = shutil.which("bwrap")
        if binary is None:
            raise UsageError(
                "bwrap is not installed: apt-get install bubblewrap, or --sandbox unshare|none"
            )
        return Bwrap(binary)
    system_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    tools = {t: shutil.which(t, path=system_path) for t in ("unshare", "setpriv", "mount")}
    tools |= {t: shutil.which(t, path=system_path) for t in ("umount", "pivot_root", "ip")}
    missing = [t for t, where in tools.items() if where is None and t != "ip"]
    if missing:
        raise UsageError(
            f"--sandbox unshare needs util-linux {', '.join(missing)}: install util-linux, "
            "or --sandbox bwrap|none"
        )
    return Unshare({t: where for t, where in tools.items() if where}, _stage())


@functools.cache
def _working(name: str) -> Sandbox:
    """Build the backend and run `true` in it once per process: a namespace the kernel refuses
    (containers, hardened sysctls) shows here, not in the middle of a run."""
    sandbox = _build(name)
    if not sandbox.confines:
        return sandbox
    with sandbox_home() as home:
        policy = SandboxPolicy(writable=(home,), env=child_env({}, home))
        argv = sandbox.argv(["true"], policy, home)
        try:
            done = subprocess.run(
                argv,
                env=policy.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=60,
                start_new_session=True,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = f"--sandbox {name} cannot start here: {exc}; or --sandbox none"
            raise UsageError(why) from exc
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit {done.returncode}"
        raise UsageError(
            f"--sandbox {name} cannot create its namespaces here ({why}): allow unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1, or a container with "
            "them), or pass --sandbox none"
        )
    return sandbox


def choose_sandbox(wanted: str) -> Sandbox:
    """`auto` is the first of bwrap, unshare that works here; it never falls back to none."""
    if wanted not in ("auto", *BACKENDS):
        raise UsageError(f"unknown sandbox {wanted!r}: choose auto, {', '.join(BACKENDS)}")
    if wanted != "auto":
        return _working(wanted)
    reasons = []
    for name in ("bwrap", "unshare"):
        try:
            return _working(name)
        except UsageError as exc:
            reasons.append(f"{name}: {exc}")
    raise UsageError(
        f"no sandbox works here ({'; '.join(reasons)}). Install bubblewrap, or pass "
        "--sandbox none to run the agent's commands unconfined"
    )


def _interpreter_prefixes(venv: Path) -> list[Path]:
    found = [venv]
    cfg = venv / "pyvenv.cfg"
    if cfg.is_file():
        for line in cfg.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                found.append(Path(value.strip()).parent)  # <prefix>/bin -> <prefix>
    python = venv / "bin" / "python"
    if python.exists():
        found.append(python.resolve().parent.parent)
    return found


def policy_for_worktree(
    worktree: Path,
    repo: Path,
    home: Path,
    env: Mapping[str, str],
    *,
    network: bool = False,
    read_only: Iterable[Path] = (),
) -> SandboxPolicy:
    """The standard policy for a run: the worktree writable, the interpreters read-only, the
    user's home and the repository checkout hidden, its git folder included: the worktree holds
    no git metadata, and nothing of git's is shown (docs/decisions/0020-*)."""
    writable = [worktree, home]
    shown = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), *read_only]
    for venv in (repo / ".venv", repo / "venv", worktree / ".venv"):
        if venv.is_dir():
            shown += _interpreter_prefixes(venv)
    return SandboxPolicy(
        writable=tuple(writable),
        env=dict(env),
        read_only=tuple(shown),
        hidden=(Path.home(), repo),
        network=network,
    )


@dataclass(frozen=True)
class Confinement:
    """One run's sandbox and policy: every command the agent or a gate runs is wrapped by it."""

    sandbox: Sandbox
    policy: SandboxPolicy

    def wrap(self, command: list[str], cwd: Path) -> list[str]:
        return self.sandbox.argv(command, self.policy, cwd)

    @property
    def ends_with_ssw(self) -> bool:
        """Whether a command it wraps, and all it starts, die with ssw however ssw ends."""
        return self.sandbox.ends_with_ssw


def reaped(confinement: Confinement | None) -> bool:
    """Whether a command run under `confinement` (None: on the host) needs util/reaper.py to
    die with ssw: only where the sandbox does not see to it."""
    return confinement is None or not confinement.ends_with_ssw


__all__ = [
    "BACKENDS",
    "NONE_NOTICE",
    "Bwrap",
    "Confinement",
    "NoSandbox",
    "Sandbox",
    "SandboxPolicy",
    "Unshare",
    "child_env",
    "choose_sandbox",
    "mount_plan",
    "policy_for_worktree",
    "reaped",
    "sandbox_home",
]
