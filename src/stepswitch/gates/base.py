"""The base commit as the gates read it: from the repository's object store, never the worktree.

The common git folder (objects, refs, config) is found once, when the suite is made and before any
edit; every later read names it (GIT_DIR) with replacement objects off, so what the worktree holds
(its `.git` file, the linked worktree's index and HEAD, which a run's sandbox leaves writable, or a
`git replace`) cannot change what is read. Files are compared with the commit's tree by their
content (`blob_id`), never through git's index, which the agent's commands can rewrite
(`git mv`, `git update-index --assume-unchanged`).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_S = 60.0
LINK_MODE = "120000"
SUBMODULE_MODE = "160000"
_FULL_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")


class BaseUnreadable(Exception):
    """The base commit (or a file in it) cannot be read: the message says why."""


@dataclass(frozen=True)
class Entry:
    """A file of the base commit's tree."""

    mode: str  # "100644", "100755", LINK_MODE (a symbolic link), SUBMODULE_MODE
    oid: str
    size: int | None  # None for a submodule


def is_commit_id(rev: str) -> bool:
    """Whether `rev` is a full object id (a run's base commit), not a name like HEAD."""
    return _FULL_ID.match(rev) is not None


def blob_id(data: bytes, like: str) -> str:
    """git's object id of a blob holding `data`, in the hash `like` (an existing id) uses."""
    digest = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def _run(args: list[str], cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise BaseUnreadable(f"git {args[0]} did not run: {exc}") from exc


def _why(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else f"git exited {done.returncode}"


class BaseTree:
    """Reads of commits in the repository that holds `root` (a checkout or a run's worktree)."""

    def __init__(
        self, root: Path, git_dir: Path, admin_dir: Path, prefix: str, env: Mapping[str, str]
    ) -> None:
        self.root = root
        self.git_dir = git_dir  # the common git folder: objects and refs
        self.admin_dir = admin_dir  # this worktree's own (index, HEAD): the same in a checkout
        self.prefix = prefix  # root's path inside the repository ("" at its top, else "sub/")
        self._env = {**env, "GIT_DIR": str(git_dir), "GIT_NO_REPLACE_OBJECTS": "1"}
        self._env.pop("GIT_WORK_TREE", None)
        self._discover_env = {k: v for k, v in env.items() if not k.startswith("GIT_")}
        self._entries: dict[str, dict[str, Entry]] = {}

    @classmethod
    def find(cls, root: Path, env: Mapping[str, str]) -> BaseTree | None:
        """The repository holding `root`, or None when it is in none (a plain folder)."""
        plain = {k: v for k, v in env.items() if not k.startswith("GIT_")}
        try:
            done = _run(
                [
                    *("rev-parse", "--path-format=absolute", "--git-common-dir"),
                    *("--absolute-git-dir", "--show-prefix"),
                ],
                root,
                plain,
            )
        except BaseUnreadable:
            return None
        lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
        if done.returncode != 0 or len(lines) < 2:
            return None
        prefix = lines[2] if len(lines) > 2 else ""
        return cls(root, Path(lines[0]), Path(lines[1]), prefix, env)

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        return _run(list(args), self.git_dir, self._env)

    def commit(self, rev: str) -> str:
        """The full id of commit `rev` (an id, or a name like HEAD as the worktree sees it).
        Raises BaseUnreadable."""
        commit = rev
        if not is_commit_id(rev):
            # A name is the worktree's own (a linked worktree has its own HEAD): resolve it there.
            args = ["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"]
            done = _run(args, self.root, self._discover_env)
            if done.returncode != 0:
                why = _why(done) if done.stderr.strip() else "no such commit"
                raise BaseUnreadable(f"cannot read the base commit {rev!r}: {why}")
            commit = done.stdout.decode().strip()
        done = self._git("cat-file", "-e", f"{commit}^{{commit}}")
        if done.returncode != 0:
            raise BaseUnreadable(f"cannot read the base commit {rev!r}: not in {self.git_dir}")
        return commit

    def entries(self, commit: str) -> dict[str, Entry]:
        """Every file of `commit` under root (paths relative to root). Raises BaseUnreadable."""
        if commit in self._entries:
            return self._entries[commit]
        tree = f"{commit}:{self.prefix.rstrip('/')}" if self.prefix else commit
        done = self._git("ls-tree", "-r", "-l", "-z", "--full-tree", tree)
        if done.returncode != 0:
            raise BaseUnreadable(f"cannot list the base commit {commit[:12]}: {_why(done)}")
        out: dict[str, Entry] = {}
        for record in done.stdout.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, _kind, oid, size = meta.decode().split()
            path = name.decode("utf-8", "surrogateescape")
            out[path] = Entry(mode, oid, int(size) if size.isdigit() else None)
        self._entries[commit] = out
        return out

    def blob(self, oid: str) -> bytes:
        done = self._git("cat-file", "blob", oid)
        if done.returncode != 0:
            raise BaseUnreadable(f"cannot read object {oid[:12]}: {_why(done)}")
        return done.stdout

    def read(self, commit: str, path: str) -> bytes | None:
        """The bytes of `path` (relative to root) at `commit`; None when the commit has no such
        file. Raises BaseUnreadable."""
        entry = self.entries(commit).get(path.strip().removeprefix("./"))
        if entry is None or entry.mode in (LINK_MODE, SUBMODULE_MODE):
            return None
        return self.blob(entry.oid)

    def text(self, commit: str, path: str) -> str | None:
        data = self.read(commit, path)
        return None if data is None else data.decode("utf-8", "replace")

    def worktree_paths(self) -> tuple[set[str], set[str]]:
        """What git sees in the worktree, relative to root: every index entry and every untracked
        file it does not ignore; and, apart, untracked folders that hold another repository
        (git does not look inside them). Whatever the index says, a file is in one of the two
        lists. Raises BaseUnreadable."""
        env = {**self._env, "GIT_DIR": str(self.admin_dir), "GIT_WORK_TREE": str(self.root)}
        env["GIT_COMMON_DIR"] = str(self.git_dir)
        paths: set[str] = set()
        nested: set[str] = set()
        for extra in (("--cached",), ("--others", "--exclude-standard")):
            done = _run(["ls-files", "-z", *extra], self.root, env)
            if done.returncode != 0:
                raise BaseUnreadable(f"cannot list the worktree's files: {_why(done)}")
            for name in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
                if name.endswith("/"):
                    nested.add(name.rstrip("/"))
                elif name:
                    paths.add(name)
        return paths, nested
