"""The sandbox: canaries in the environment, the home and the checkout never reach a sandboxed
command; it writes only the worktree, has no network, and dies with ssw."""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stepswitch.agent.workspace.worktree import create_worktree
from stepswitch.errors import UsageError
from stepswitch.util import sandbox as sb
from stepswitch.util.keys import looks_secret
from stepswitch.util.sandbox import (
    SandboxPolicy,
    child_env,
    choose_sandbox,
    mount_plan,
    policy_for_worktree,
    sandbox_home,
)

CANARIES = {
    "OPENAI_API_KEY": "canary-provider-51c0",
    "DATABASE_URL": "postgres://app:canary-db-77e1@db.invalid/app",
    "GITHUB_PAT": "canary-pat-0b9d",
    "MY_APP_SETTING": "canary-custom-c4f2",  # a harmless name: only an allow-list stops it
    "PYTHON_API_TOKEN": "canary-python-e6a3",  # PYTHON* is allowed, minus secret-looking names
}
HOME_CANARY = "canary-home-file-38aa"
CHECKOUT_CANARY = "canary-checkout-file-91fd"
CONFINING = ("bwrap", "unshare")


def _backend(name: str) -> sb.Sandbox:
    try:
        return choose_sandbox(name)
    except UsageError as exc:
        pytest.skip(str(exc))


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A user home, and a repository with its worktree at <repo>/.ssw/worktrees/t1."""
    user_home = tmp_path / "home"
    (user_home / ".config").mkdir(parents=True)
    (user_home / ".config" / "token").write_text(HOME_CANARY)
    monkeypatch.setenv("HOME", str(user_home))  # Path.home(): the home the policy hides
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "notes.txt").write_text(CHECKOUT_CANARY)
    _git(repo, "add", "notes.txt")
    _git(repo, "commit", "-qm", "base")
    worktree = create_worktree(repo, "t1").path  # as a run makes it: no git metadata in it
    return {"root": tmp_path, "home": user_home, "repo": repo, "worktree": worktree}


def _snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, str]:
    found = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or s in path.parents for s in skip) or not path.is_file():
            continue
        found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener outside every sandbox, on 127.0.0.1 only."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


# What an untrusted command tries; each line of output is "PROBE <what> <result>".
PROBES = r"""
echo "PROBE env $(env | tr '\n' ' ')"
echo "PROBE procs $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' ' ')"
echo "PROBE home $(cat "$USER_HOME/.config/token" 2>&1; ls -a "$USER_HOME" 2>&1 | tr '\n' ' ')"
echo "PROBE checkout $(cat ../../../notes.txt 2>&1)"
echo "PROBE escape $( (echo x > ../../../escaped.txt && echo WROTE) 2>&1)"
echo "PROBE tmp-escape $( (echo x > "$OUTSIDE/escaped.txt" && echo WROTE) 2>&1)"
echo "PROBE homewrite $( (echo x > "$USER_HOME/planted" && echo WROTE) 2>&1)"
echo "PROBE net $("$PY" -c 'import socket,sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5); print("CONNECTED")
except OSError as e: print("refused", e)' "$PORT")"
echo "PROBE loopback $("$PY" -c 'import socket
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); socket.create_connection(s.getsockname())
print("ok")')"
echo "PROBE pid1 $(cat /proc/1/comm)"
echo made > made-in-worktree.txt
echo "PROBE git $(git status --short 2>&1 | tr '\n' ' ')"
echo "PROBE gitdir $(ls -a "$REPO/.git" 2>&1 | tr '\n' ' ')"
"""


def _probe(
    name: str, layout: dict[str, Path], port: int, *, network: bool = False
) -> dict[str, str]:
    """Runs PROBES as ssw would: from a process whose own initial environment holds the canaries
    (so a visible /proc/<ancestor>/environ would leak them)."""
    sandbox = _backend(name)
    script = f"""
import json, os, subprocess, sys
from pathlib import Path
from stepswitch.util.sandbox import choose_sandbox, child_env, policy_for_worktree, sandbox_home
sandbox = choose_sandbox({sandbox.name!r})
repo, worktree = Path({str(layout["repo"])!r}), Path({str(layout["worktree"])!r})
with sandbox_home() as home:
    env = child_env(os.environ, home, extra_allowed=["USER_HOME", "OUTSIDE", "PY", "PORT", "REPO"])
    policy = policy_for_worktree(worktree, repo, home, env, network={network!r})
    argv = sandbox.argv(["bash", "-c", sys.argv[1]], policy, worktree)
    done = subprocess.run(argv, env=policy.env, cwd=worktree, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, start_new_session=True, timeout=120)
print(done.stdout + done.stderr)
"""
    env = {k: v for k, v in os.environ.items() if not looks_secret(k, v)} | CANARIES
    env |= {"USER_HOME": str(layout["home"]), "OUTSIDE": str(layout["root"])}
    env |= {"REPO": str(layout["repo"])}
    env |= {"PY": sys.executable, "PORT": str(port)}
    done = subprocess.run(
        [sys.executable, "-c", script, PROBES],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("PROBE "):
            _, what, *rest = line.split(" ", 2)
            results[what] = rest[0] if rest else ""
    assert "env" in results, done.stdout
    results["all"] = done.stdout
    return results


@pytest.mark.parametrize("name", CONFINING)
def test_no_canary_reaches_a_sandboxed_command_and_nothing_outside_the_worktree_changes(
    name: str, layout: dict[str, Path], listener: int
) -> None:
    outside = (layout["worktree"], layout["repo"] / ".ssw")
    before = _snapshot(layout["root"], outside)
    seen = _probe(name, layout, listener)
    for value in [*CANARIES.values(), HOME_CANARY, CHECKOUT_CANARY]:
        assert value not in seen["all"]
    assert "PATH=" in seen["env"] and "TMPDIR=" in seen["env"]  # the probes really ran
    assert "WROTE" not in seen["escape"] + seen["homewrite"]  # read-only, loudly
    # /tmp is a private tmpfs: the write lands there and vanishes with the sandbox.
    assert not (layout["root"] / "escaped.txt").exists()
    assert "CONNECTED" not in seen["net"]
    assert seen["loopback"] == "ok"  # a test suite's own local servers still work
    assert seen["pid1"] != "systemd" and "init" not in seen["pid1"]
    assert "not a git repository" in seen["git"]  # nothing of git's in the worktree
    assert "No such file or directory" in seen["gitdir"]  # the repository's git folder: hidden
    assert (layout["worktree"] / "made-in-worktree.txt").read_text() == "made\n"
    assert _snapshot(layout["root"], outside) == before


def test_none_leaks_what_the_sandbox_hides(layout: dict[str, Path], listener: int) -> None:
    """The control: without a sandbox the same probes find ancestors' keys and the home."""
    seen = _probe("none", layout, listener)
    assert CANARIES["OPENAI_API_KEY"] not in seen["env"]  # the allow-list still applies
    assert CANARIES["OPENAI_API_KEY"] in seen["procs"]  # but /proc/<ssw>/environ is readable
    assert HOME_CANARY in seen["home"]
    assert "CONNECTED" in seen["net"]


@pytest.mark.parametrize("name", CONFINING)
def test_network_flag_lets_the_command_connect(
    name: str, layout: dict[str, Path], listener: int
) -> None:
    assert "CONNECTED" in _probe(name, layout, listener, network=True)["net"]


@pytest.mark.parametrize("name", CONFINING)
def test_read_only_punches_through_hidden_and_the_interpreter_runs(
    name: str, tmp_path: Path
) -> None:
    sandbox = _backend(name)
    hidden = tmp_path / "hidden"
    (hidden / "shown").mkdir(parents=True)
    (hidden / "shown" / "ok.txt").write_text("visible\n")
    (hidden / "secret.txt").write_text("invisible")
    with sandbox_home() as home:
        policy = SandboxPolicy(
            writable=(home,),
            read_only=(hidden / "shown", Path(sys.prefix), Path(sys.base_prefix)),
            hidden=(hidden,),
            env=child_env({"PATH": os.environ["PATH"]}, home),
        )
        command = (
            f"ls {hidden}; cat {hidden}/shown/ok.txt; {sys.executable} -c 'print(6*7)';"
            f"touch {hidden}/shown/new 2>/dev/null && echo WROTE"
        )
        argv = sandbox.argv(["sh", "-c", command], policy, home)
        done = subprocess.run(argv, env=policy.env, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["shown", "visible", "42"], done.stderr
    assert not (hidden / "shown" / "new").exists()


def test_mount_plan_mounts_deeper_paths_later_and_read_only_over_hidden(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    policy = SandboxPolicy(
        writable=(tmp_path / "a" / "b",),
        read_only=(tmp_path / "a",),
        hidden=(tmp_path, tmp_path / "a"),  # the same path read-only and hidden: read-only wins
    )
    mine = [(op.kind, op.path) for op in mount_plan(policy) if op.path.startswith(str(tmp_path))]
    assert mine == [
        ("hide", str(tmp_path)),
        ("ro", str(tmp_path / "a")),
        ("rw", str(tmp_path / "a" / "b")),
        ("seal", str(tmp_path)),
    ]


def test_child_env_is_an_allow_list(tmp_path: Path) -> None:
    base = {
        **CANARIES,
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "SSW_LEDGER": "/x",
        "HOME": "/root",
        "NEEDED_BY_TESTS": "yes",
    }
    env = child_env(base, tmp_path, extra_allowed=["needed_by_tests"])
    assert env == {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "NEEDED_BY_TESTS": "yes",
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def test_unknown_and_missing_backends_are_one_line_usage_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="unknown sandbox 'docker'"):
        choose_sandbox("docker")
    sb._working.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on this PATH
    try:
        with pytest.raises(UsageError, match="bwrap is not installed: apt-get install bubblewrap"):
            choose_sandbox("bwrap")
    finally:
        sb._working.cache_clear()


def test_none_passes_the_command_through_and_says_it_confines_nothing() -> None:
    none = choose_sandbox("none")
    assert none.argv(["true"], SandboxPolicy(writable=()), Path("/")) == ["true"]
    assert not none.confines
    assert "none" in sb.NONE_NOTICE


# The "ssw" that gets SIGKILLed: starts a sandboxed tree that holds the pipe's write end, says
# ready, then waits forever.
_PARENT = """
import os, subprocess, sys, time
from pathlib import Path
from stepswitch.util.sandbox import SandboxPolicy, child_env, choose_sandbox, sandbox_home
fd = int(sys.argv[2])
sandbox = choose_sandbox(sys.argv[1])
with sandbox_home() as home:
    policy = SandboxPolicy(writable=(home,), env=child_env(os.environ, home))
    tree = f"(setsid sleep 600 &) ; sleep 600 & echo ready >&{fd}; wait"
    argv = sandbox.argv(["bash", "-c", tree], policy, home)
    subprocess.Popen(argv, env=policy.env, pass_fds=(fd,), start_new_session=True)
    os.close(fd)
    while True:
        time.sleep(60)
"""


@pytest.mark.parametrize("name", CONFINING)
def test_killing_ssw_kills_every_sandboxed_process(name: str, tmp_path: Path) -> None:
    _backend(name)
    read_end, write_end = os.pipe()
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # a killed parent leaves its scratch folders here
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, name, str(write_end)], pass_fds=(write_end,), env=env
    )
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 120)
        assert ready and os.read(read_end, 64) == b"ready\n"
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        # Every process that holds the write end must be gone before the pipe reads EOF.
        ready, _, _ = select.select([read_end], [], [], 120)
        assert ready, "a sandboxed process outlived ssw"
        assert os.read(read_end, 64) == b""
    finally:
        os.close(read_end)
        if parent.poll() is None:
            parent.kill()


def test_choose_auto_picks_a_confining_backend_or_says_to_pass_none() -> None:
    try:
        chosen = choose_sandbox("auto")
    except UsageError as exc:
        assert "--sandbox none" in str(exc)
    else:
        assert chosen.confines and chosen.name in CONFINING


def test_writable_folder_must_exist(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        mount_plan(SandboxPolicy(writable=(tmp_path / "gone",)))


def test_policy_for_worktree_shows_nothing_of_git_and_hides_home_and_checkout(
    layout: dict[str, Path],
) -> None:
    with sandbox_home() as home:
        policy = policy_for_worktree(layout["worktree"], layout["repo"], home, {})
    assert policy.writable == (layout["worktree"], home)
    assert not [p for p in policy.read_only if p.is_relative_to(layout["repo"])]
    assert set(policy.hidden) == {layout["home"], layout["repo"]}
    assert json.dumps(dict(policy.env)) == "{}"


# A fresh "ssw" that runs one sandboxed command through the process-group runner as the run
# tool and the gates do, then one on the host: whether the reaper had started after each.
_REAPER_AFTER = """
import os, sys
from stepswitch.util import reaper
from stepswitch.util.proc import run_in_group
from stepswitch.util.sandbox import Confinement, SandboxPolicy, child_env, choose_sandbox
from stepswitch.util.sandbox import reaped, sandbox_home
with sandbox_home() as home:
    policy = SandboxPolicy(writable=(home,), env=child_env(os.environ, home))
    confinement = Confinement(choose_sandbox(sys.argv[1]), policy)
    run_in_group(confinement.wrap(["true"], home), cwd=home, env=policy.env, timeout_s=60,
                 output_cap=100, reaped=reaped(confinement))
    print(reaper._started)
    run_in_group(["true"], cwd=home, env=policy.env, timeout_s=60, output_cap=100,
                 reaped=reaped(None))
    print(reaper._started)
"""


@pytest.mark.parametrize("name", CONFINING)
def test_a_sandbox_that_ends_with_ssw_needs_no_reaper_and_the_host_still_gets_one(
    name: str, tmp_path: Path
) -> None:
    """The test above shows that every process of a confining sandbox dies with a SIGKILLed
    ssw; so a run whose commands are all confined starts no reaper process (issue 48), and the
    first command on the host still starts it."""
    assert _backend(name).ends_with_ssw
    done = subprocess.run(
        [sys.executable, "-c", _REAPER_AFTER, name],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
    assert not choose_sandbox("none").ends_with_ssw
