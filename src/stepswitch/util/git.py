"""git by its command line: the one git runner of the whole program.

One subprocess per command, no library in between (docs/decisions/0018-start-up-costs.md).
Every command runs with git's ways of starting another program switched off (fsmonitor, hooks,
credential helpers, transports, signing, automatic gc), with no GIT_* variable of the caller's
and, unless the caller says the repository is the user's own checkout read before any agent ran,
without system or global configuration (docs/decisions/0020-git-outside-the-agents-reach.md).
Output is bytes in `GitResult`; `.out` decodes it as UTF-8 with surrogate escapes (paths need
not be UTF-8) and loses one trailing newline, as git's porcelain would be read by a shell.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, Unpack

from stepswitch.errors import GitTimedOut, UsageError
from stepswitch.util.git_config_files import config_files, default_excludes_file, may_name_excludes

GIT_TIMEOUT_S = 120.0  # a hung git (a stale lock, a slow filesystem) ends the command, not the run

# Each names a way git could start a program or redirect a write; all of them off, whatever any
# configuration file says (command-line configuration wins over every file).
HARDENING = (
    *("-c", "core.fsmonitor=false"),
    *("-c", "core.hooksPath=/dev/null"),  # every hook, not only those --no-verify skips
    *("-c", "core.untrackedCache=false"),
    *("-c", "core.sshCommand=false"),
    *("-c", "credential.helper="),
    *("-c", "protocol.allow=never"),
    *("-c", "commit.gpgSign=false"),
    *("-c", "gc.auto=0"),
    *("-c", "maintenance.auto=false"),
    *("-c", "submodule.recurse=false"),
    *("-c", "core.pager=cat"),
)
# The caller's environment passes only these; no GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH, ....
_PASSED = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "XDG_CONFIG_HOME")


@dataclass(frozen=True)
class GitResult:
    status: int
    stdout: bytes
    stderr: bytes

    @property
    def out(self) -> str:
        return _text(self.stdout)

    @property
    def err(self) -> str:
        return _text(self.stderr).strip()


def _text(data: bytes) -> str:
    text = data.decode("utf-8", "surrogateescape")
    return text[:-1] if text.endswith("\n") else text


def _command_name(args: tuple[str, ...]) -> str:
    """The subcommand, past git's own options (`-c k=v --no-optional-locks status` -> status)."""
    words = iter(args)
    for word in words:
        if word in ("-c", "-C"):
            next(words, None)  # the option's value
        elif not word.startswith("-"):
            return word
    return ""


def git_env(env: Mapping[str, str] | None = None, *, user_config: bool = False) -> dict[str, str]:
    """The environment a git command gets: a few of `env`'s (default os.environ) names, the
    extra GIT_* names `env` sets on purpose dropped unless they are ssw's own (identity, index),
    replacement objects off, no prompt; system and global configuration off unless
    `user_config` (the user's checkout, read before any agent ran)."""
    source = os.environ if env is None else env
    out = {name: source[name] for name in _PASSED if name in source}
    out.setdefault("PATH", os.defpath)
    for name in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
    ):
        if env is not None and name in env:  # only what a caller set for this command
            out[name] = env[name]
    out.update(
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",  # a look never rewrites an index
        GIT_ATTR_NOSYSTEM="1",
    )
    if not user_config:
        out.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    return out


class GitOptions(TypedDict, total=False):
    """run_git's options other than its timeout, as git_out passes them on."""

    env: Mapping[str, str] | None
    input: bytes | None
    git_dir: Path | None
    work_tree: Path | None
    index: Path | None
    user_config: bool


def git_argv_env(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    index: Path | None = None,
    user_config: bool = False,
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of `git ARGS` run in `cwd` (run_git's, and a long-lived
    git's: util/git_batch.py)."""
    full_env = git_env(env, user_config=user_config)
    if git_dir is not None:
        full_env["GIT_DIR"] = str(git_dir)
        # Without a work tree git must not guess one from cwd; with one it must take this one.
        full_env["GIT_WORK_TREE"] = str(work_tree) if work_tree is not None else str(cwd)
    if index is not None:
        full_env["GIT_INDEX_FILE"] = str(index)
    return ["git", *HARDENING, *args], full_env


def run_git(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = GIT_TIMEOUT_S,
    input: bytes | None = None,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    index: Path | None = None,
    user_config: bool = False,
) -> GitResult:
    """`git ARGS` in `cwd`; its status and output, whatever the status. `git_dir`, `work_tree`
    and `index` name the repository outright (git then reads no `.git` file or folder in
    `cwd`). A git that cannot start or does not finish in `timeout` (its process group is killed
    then) is a UsageError naming the command."""
    if not cwd.is_dir():
        raise UsageError(f"{cwd} is not a folder")
    argv, full_env = git_argv_env(
        cwd, *args, env=env, git_dir=git_dir, work_tree=work_tree, index=index,
        user_config=user_config,
    )  # fmt: skip
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # no terminal; what it starts dies with it
        )
    except FileNotFoundError as exc:
        raise UsageError("git is not installed or not on PATH") from exc
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise GitTimedOut(
            f"{cwd}: git {_command_name(args)} did not finish in {timeout:g} s"
        ) from exc
    return GitResult(proc.returncode, out, err)


def git_out(cwd: Path, *args: str, **options: Unpack[GitOptions]) -> str:
    """`git ARGS` in `cwd`, with run_git's options; its output, or a UsageError with git's
    complaint."""
    done = run_git(cwd, *args, **options)
    if done.status != 0:
        raise UsageError(f"{cwd}: git {_command_name(args)} failed: {done.err}")
    return done.out


@dataclass(frozen=True)
class Checkout:
    """A checkout as git itself found it, read once before any agent ran; every later command
    names these folders instead of letting git look for them again."""

    top: Path  # the checkout's top folder
    git_dir: Path  # its own git folder (HEAD, index): the common one unless a linked worktree
    common_dir: Path  # objects, refs, config
    head: str | None  # the commit it is on, None before the first commit
    branch: str | None  # None when detached
    excludes_file: ExcludesFile  # the user's excludes file, found when first asked
    exclude: Path | None = None  # its info/exclude file (a linked worktree's: the common one)


def git_answer(cwd: Path, *args: str) -> str | None:
    """`git ARGS` in `cwd` (the user's git config read): its output stripped, or None when git
    cannot answer (no git, not a repository, unknown object)."""
    try:
        done = run_git(cwd, *args, user_config=True)
    except UsageError:
        return None
    return done.out.strip() if done.status == 0 else None


def discover(path: Path) -> Checkout | None:
    """The checkout holding `path` (with the user's configuration: this is the user's own
    checkout, before a run); None when `path` is in none."""
    return _discover_at_once(path) or _discover(path)


# Folders, the exclude file, HEAD's commit and the ref HEAD names, from one git process.
_AT_ONCE = (
    *("--show-toplevel", "--absolute-git-dir", "--git-common-dir", "--git-path", "info/exclude"),
    *("HEAD^{commit}", "--symbolic-full-name", "HEAD"),
)


def _discover_at_once(path: Path) -> Checkout | None:
    """discover in one process (the excludes file is found when first asked); None when that
    cannot answer (no commit yet, a path holding a newline, HEAD on no branch's ref): the one
    question at a time way answers then."""
    done = run_git(path, "rev-parse", "--path-format=absolute", *_AT_ONCE, user_config=True)
    lines = done.out.split("\n")
    if done.status != 0 or len(lines) != 6:
        return None
    top, git_dir, common, exclude, head, ref = lines
    if ref != "HEAD" and not ref.startswith("refs/heads/"):
        return None
    return Checkout(
        top=Path(top),
        git_dir=Path(git_dir),
        common_dir=Path(common),
        head=head,
        branch=ref.removeprefix("refs/heads/") if ref != "HEAD" else None,
        excludes_file=ExcludesFile(Path(top), Path(git_dir), Path(common)),
        exclude=Path(exclude),
    )


@dataclass(eq=False)
class ExcludesFile:
    """The user's excludes file for the checkout at `top`, found when first asked (`path()`),
    not at every start (issue 48): core.excludesFile as the user's configuration names it,
    else git's default one if it is there. A git process answers only when a configuration
    file could name one (util/git_config_files.py); a run's start asks nothing."""

    top: Path
    git_dir: Path
    common_dir: Path
    _found: tuple[str | None] | None = None

    def path(self) -> str | None:
        if self._found is None:
            self._found = (self._find(),)
        return self._found[0]

    def _find(self) -> str | None:
        if may_name_excludes(config_files(self.git_dir, self.common_dir)):
            excludes = run_git(
                self.top, "config", "--path", "--get", "core.excludesFile",
                git_dir=self.git_dir, user_config=True,
            )  # fmt: skip
            if excludes.status == 0 and excludes.out.strip():
                return excludes.out.strip()
        default = default_excludes_file()
        return str(default) if default.is_file() else None


def _discover(path: Path) -> Checkout | None:
    asks = ("--show-toplevel", "--absolute-git-dir", "--git-common-dir")
    done = run_git(path, "rev-parse", "--path-format=absolute", *asks, user_config=True)
    if done.status != 0:
        return None
    lines = done.out.split("\n")  # a line each (`out` drops the last newline)
    if len(lines) != len(asks):  # a path holding a newline: ask one at a time
        lines = []
        for ask in asks:
            one = run_git(path, "rev-parse", "--path-format=absolute", ask, user_config=True)
            if one.status != 0:
                return None
            lines.append(one.out)
    top, git_dir, common = (Path(line) for line in lines)
    head = run_git(
        top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", git_dir=git_dir, work_tree=top
    )
    branch = run_git(
        top, "symbolic-ref", "--short", "--quiet", "HEAD", git_dir=git_dir, work_tree=top
    )
    return Checkout(
        top=top,
        git_dir=git_dir,
        common_dir=common,
        head=head.out.strip() if head.status == 0 else None,
        branch=branch.out.strip() if branch.status == 0 and branch.out.strip() else None,
        excludes_file=ExcludesFile(top, git_dir, common),
    )
