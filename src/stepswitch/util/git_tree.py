"""A work tree that holds no git metadata: ssw writes a commit's files into it, reads it back as
git objects, and commits what it holds on a branch, with the git folder and ssw's own index
named explicitly and kept where the sandbox cannot see them.

git never works on the tree itself: it lists the tree's untracked files (`ls-files --others`,
which reads ignore patterns and starts nothing), and everything else is ssw reading files through
descriptors that never follow a symbolic link, then git building trees, commits and diffs from
objects. No `.git` file, `commondir`, config, hook, attribute, filter or fsmonitor in the tree
takes part (docs/decisions/0020-git-outside-the-agents-reach.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from stepswitch.errors import GitFailed, GitTimedOut, UsageError
from stepswitch.util.commit_object import write_commit
from stepswitch.util.git import GIT_TIMEOUT_S, ExcludesFile, GitResult, git_argv_env, run_git
from stepswitch.util.git_batch import ObjectReader, commit_tree_id, tree_listing
from stepswitch.util.git_objects import (
    MAX_FILE_BYTES,
    RACY_NS,
    SUBMODULE_MODE,
    Entries,
    TreeEntry,
    blob_id,
    holdable,
    leftover,
    read_entry,
    row_under,
    stamp,
)
from stepswitch.util.ignore_check import IgnoreChecker
from stepswitch.util.loose_objects import LooseObjects, plain_path
from stepswitch.util.safe_fs import Beneath, UnsafePath
from stepswitch.util.tree_checkout import FolderWriter, listed_entries
from stepswitch.util.tree_differ import DIFF_TREE_ARGS, TreeDiffer
from stepswitch.util.tree_listing import read_listing, remove_blocking_ignores
from stepswitch.util.tree_shape import KeptListing

# Listing a tree takes a second or two; far longer means git waits on something the tree holds.
LIST_TIMEOUT_S = 30.0
_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
_KEPT_DIFFS = 4


@dataclass(frozen=True)
class _WrittenTree:
    """A tree write_tree wrote: from what base and entries, its id, the paths git refused."""

    base_commit: str
    entries: Entries
    tree: str
    refused: tuple[str, ...]


@dataclass
class TreeGit:
    """The work tree `work_tree` of the repository whose git folder is `git_dir`,
    on branch `branch` (a full ref, `refs/heads/...`) from `base_commit`; `state` is ssw's own
    folder for it (scratch indexes), outside the sandbox's view."""

    git_dir: Path  # the git folder, named outright: objects and refs (a checkout: its own)
    work_tree: Path
    state: Path
    branch: str
    base_commit: str
    excludes_file: ExcludesFile | None = None  # the user's: only the listing reads it
    # The index of a checkout that is also the work tree (the library on a plain checkout):
    # set to each new commit, so `git status` there shows what is committed as committed.
    checkout_index: Path | None = None
    prefix: str = ""  # for a subfolder of a checkout: its path in the repository, "sub/"
    _stamps: dict[str, tuple[tuple[int, ...], TreeEntry]] = field(default_factory=dict)
    _written: set[str] = field(default_factory=set)
    _trees: dict[str, Entries] = field(default_factory=dict)  # commit id -> its entries
    _removed: list[str] = field(default_factory=list)  # what ssw had to take out of the tree
    _last_tree: _WrittenTree | None = None  # a run writes the same tree again between edits
    _steady: int = 0  # how many `steady()` blocks are open
    _listed: tuple[set[str], set[str]] | None = None  # the listing a steady block reuses
    _listing: KeptListing = field(default_factory=KeptListing)  # git's last, by its shape
    _reader: ObjectReader | None = None  # one `cat-file --batch` for the objects a run reads
    _differ: TreeDiffer | None = None  # one `diff-tree --stdin` for the review's diffs
    _tree_ids: dict[str, str] = field(default_factory=dict)  # commit or tree id -> tree id
    _head: tuple[str, str] | None = None  # the branch's commit and tree, as ssw last set them
    # the last diffs between two object ids: a review and the step after it ask the same one
    _diffs: dict[tuple[tuple[str, ...], str, str], str] = field(default_factory=dict)

    @property
    def index(self) -> Path:
        # Never written: an empty index, so git lists every file of the tree as untracked and
        # reads nothing a former command left.
        return self.state / "empty.index"

    @property
    def sha256(self) -> bool:
        return len(self.base_commit) == 64

    @property
    def objects(self) -> LooseObjects | None:
        """The repository's object folder, written without a git process (util/loose_objects);
        None when the git folder holds none of its own (a linked checkout's: git finds it)."""
        if not (self.git_dir / "objects").is_dir():
            return None
        return LooseObjects(self.git_dir, self.sha256)

    def git(
        self,
        *args: str,
        input: bytes | None = None,
        index: Path | None = None,
        timeout: float = GIT_TIMEOUT_S,
    ) -> GitResult:
        config = ("-c", f"core.excludesFile={os.devnull}")  # the listing names the user's
        self.state.mkdir(parents=True, exist_ok=True)  # git runs there: never in the work tree
        return run_git(
            self.state,
            *config,
            *args,
            input=input,
            git_dir=self.git_dir,
            work_tree=self.work_tree,
            index=index or self.index,
            timeout=timeout,
        )

    def git_ok(self, *args: str, input: bytes | None = None, index: Path | None = None) -> bytes:
        done = self.git(*args, input=input, index=index)
        if done.status != 0:
            name = next((a for a in args if not a.startswith("-")), "")
            raise GitFailed(f"git {name} failed: {done.err}")
        return done.stdout

    # -- the base commit ------------------------------------------------------------------------

    def tree_entries(self, rev: str) -> Entries:
        """Every entry of commit or tree `rev` under the prefix, paths relative to it."""
        rev = self.base_commit if rev == "HEAD" else rev  # HEAD: the tree's own, not the repo's
        if rev in self._trees:
            return self._trees[rev]
        spec = f"{rev}:{self.prefix.rstrip('/')}" if self.prefix else rev
        # With the folders, as `ls-tree -r -t` lists them: a name holding '/' or a path named
        # twice shows (and is refused).
        entries = listed_entries(tree_listing(self.reader(), spec, self.sha256), rev)
        if len(rev) in (40, 64):  # an object id names the same tree for ever
            self._trees[rev] = entries
        return entries

    def check_out(self, rev: str | None = None, dest: Path | None = None) -> None:
        """Write commit `rev`'s files (default the base commit) into the empty folder `dest`
        (default the work tree, whose files' stamps are then remembered), as their bytes are
        stored: no filter, no end-of-line conversion, no attribute; nothing outside the folder
        or through a link in it (UnsafeCheckout, util/tree_checkout.py)."""
        self.state.mkdir(parents=True, exist_ok=True)
        entries = self.tree_entries(rev or self.base_commit)
        blobs = [(p, e) for p, e in entries.items() if e.mode != SUBMODULE_MODE]
        contents = self._cat_blobs(e.oid for _, e in blobs)
        folder = dest or self.work_tree
        folder.mkdir(parents=True, exist_ok=True)
        with FolderWriter(folder) as writer:  # every path was checked when it was listed
            for path, entry in entries.items():
                written = writer.write(path, entry.mode, contents.get(entry.oid, b""))
                if dest is None:
                    self._remember(path, written, entry)
        self._written |= {e.oid for e in entries.values()}  # the commit's blobs are stored

    def _cat_blobs(self, oids: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(oids))
        found = self.reader().read_many(wanted)
        missing = [oid for oid, got in zip(wanted, found, strict=True) if got is None]
        if missing:
            raise GitFailed(f"git cat-file failed: {missing[0]} is missing")
        return {got[0]: got[2] for got in found if got is not None}

    def reader(self) -> ObjectReader:
        """The run's one `git cat-file --batch` (util/git_batch.py), started on first use."""
        if self._reader is None:
            self.state.mkdir(parents=True, exist_ok=True)  # git runs there: never in the tree
            self._reader = ObjectReader(self.state, self.git_dir)
            weakref.finalize(self, self._reader.close)  # a tree dropped unclosed ends it too
        return self._reader

    def close(self) -> None:
        """End the long-lived git process, if one was started; a later read starts another."""
        if self._reader is not None:
            self._reader.close()
        if self._differ is not None:
            self._differ.close()
        self._listing.close()

    # -- what the tree holds --------------------------------------------------------------------

    @contextlib.contextmanager
    def steady(self) -> Iterator[None]:
        """A block in which the caller starts no command in the tree and writes no file to it:
        the tree's listing (`listed_paths`, a git process) is made once and reused inside it.
        Files are still read each time, so a file's content is never taken from before."""
        self._steady += 1
        try:
            yield
        finally:
            self._steady -= 1
            if not self._steady:
                self._listed = None

    def listed_paths(self) -> tuple[set[str], set[str]]:
        """Every file git does not ignore (with an empty index, tracked ones too), relative to
        the tree's top; and, apart, folders that hold another repository (git does not look in
        them). Inside `steady()`, the first listing of the block."""
        if self._steady and self._listed is not None:
            paths, nested = self._listed
            return set(paths), set(nested)
        paths, nested = self._list()
        if self._steady:
            self._listed = (set(paths), set(nested))
        return paths, nested

    def _list(self) -> tuple[set[str], set[str]]:
        """git's listing; or, when the tree's shape shows it cannot have changed since git's
        last one, that one less what is gone (util/tree_shape.py), with no git process."""
        rules = [self.git_dir / "info" / "exclude", self.git_dir / "config"]
        excludes = self._excludes()
        rules += [Path(excludes)] if excludes else []
        if self._listing.checker is None:  # asked about new paths (util/ignore_check.py)
            self._listing.checker = IgnoreChecker(self.state, self._checker_argv, LIST_TIMEOUT_S)
        return self._listing.listing(self.work_tree, rules, self.prefix, self._ls_files)

    def _excludes(self) -> str | None:
        return self.excludes_file.path() if self.excludes_file is not None else None

    def _checker_argv(self) -> tuple[list[str], dict[str, str]]:
        checker = ("check-ignore", "--stdin", "-z", "--verbose", "--non-matching")
        return self._piped_argv(self._excludes(), *checker)

    def _piped_argv(self, excludes: str | None, *args: str) -> tuple[list[str], dict[str, str]]:
        """A long-lived git's command line (util/git_pipe.py), in ssw's own folder for the tree."""
        self.state.mkdir(parents=True, exist_ok=True)  # git runs there: never in the work tree
        return git_argv_env(
            self.state,
            *("-c", f"core.excludesFile={excludes or os.devnull}"),
            *args,
            git_dir=self.git_dir,
            work_tree=self.work_tree,
            index=self.index,
        )

    def _ls_files(self) -> tuple[set[str], set[str]]:
        excludes = ("-c", f"core.excludesFile={self._excludes() or os.devnull}")
        args = (*excludes, "ls-files", "-z", "--others", "--exclude-standard")
        try:
            listed = self.git(*args, timeout=LIST_TIMEOUT_S)
        except GitTimedOut:
            # git opens each folder's .gitignore: one that is a FIFO never opens. It cannot be
            # committed either, so it goes, said so; then git lists the tree again.
            if not self._remove_blocking_ignores():
                raise
            listed = self.git(*args)
        if listed.status != 0:
            raise GitFailed(f"git ls-files failed: {listed.err}")
        return read_listing(listed.stdout, self.prefix)

    def _remove_blocking_ignores(self) -> list[str]:
        """`remove_blocking_ignores` of the tree, the paths also kept for the snapshot's
        left-out list."""
        removed = remove_blocking_ignores(self.work_tree)
        self._removed += [
            f"{p}: not a file (git would wait on it for ever); removed" for p in removed
        ]
        return removed

    def snapshot(self, write: bool = False, base: str | None = None) -> tuple[Entries, list[str]]:
        """What the tree holds now, as tree entries (leftovers of the project's tools and paths
        git cannot hold aside), and the paths left out with why. With `write`, every blob is
        stored in the repository, so the entries can be written as a tree."""
        listed, nested = self.listed_paths()
        for folder in sorted(nested):  # a repository the agent made: its files are the change's
            listed |= set(self._files_under(folder))
        base_entries = self.tree_entries(base or self.base_commit)
        listed |= set(base_entries)  # tracked files that match an ignore pattern too
        self._written |= {e.oid for e in base_entries.values()}
        entries: Entries = {}
        left_out: list[str] = list(self._removed)
        beneath = Beneath(self.work_tree / self.prefix if self.prefix else self.work_tree)
        try:
            for path in sorted(listed):
                if leftover(path):
                    continue
                if not holdable(path):
                    left_out.append(f"{path}: git cannot hold this path")
                    continue
                if path in base_entries and base_entries[path].mode == SUBMODULE_MODE:
                    entries[path] = base_entries[path]
                    continue
                try:
                    entry = self._entry(beneath, path, write)
                except _TooLarge as exc:
                    left_out.append(str(exc))
                    continue
                if entry is not None:
                    entries[path] = entry
        finally:
            beneath.close()
        return entries, left_out

    def _files_under(self, folder: str) -> Iterator[str]:
        root = self.work_tree / self.prefix / folder
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in files:
                yield (Path(here) / name).relative_to(self.work_tree / self.prefix).as_posix()
            for name in dirs:
                if os.path.islink(os.path.join(here, name)):
                    yield (Path(here) / name).relative_to(self.work_tree / self.prefix).as_posix()

    def _entry(self, beneath: Beneath, path: str, write: bool) -> TreeEntry | None:
        """The entry for `path` now; None when it is no file or link (gone, a folder, reached
        through a link); _TooLarge for a file over MAX_FILE_BYTES."""
        folder, _, name = path.rpartition("/")
        try:
            parent = beneath.open(folder, os.O_RDONLY | os.O_DIRECTORY)  # no link on the way
        except (UnsafePath, OSError):
            return None
        try:
            try:
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except OSError:
                return None
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
                raise _TooLarge(f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB")
            known = self._stamps.get(path)
            if (
                known is not None
                and known[0] == stamp(info)
                and (not write or known[1].oid in self._written)
            ):
                return known[1]
            read = read_entry(parent, name)
        finally:
            os.close(parent)
        if read is None:
            return None
        mode, data, opened = read
        oid = blob_id(data, self.sha256)
        if write and oid not in self._written:
            objects = self.objects
            if objects is not None:
                objects.write(b"blob", data, oid)  # stored under the id just computed
            else:
                out = self.git_ok("hash-object", "-w", "--no-filters", "--stdin", input=data)
                if out.decode().strip() != oid:
                    raise UsageError(f"git stored {path} under another id than its content's")
            self._written.add(oid)
        entry = TreeEntry(mode, oid)
        self._remember(path, opened, entry)
        return entry

    def _remember(self, path: str, info: os.stat_result, entry: TreeEntry) -> None:
        # A file changed within the clock's resolution of its stamp could keep its stamp
        # ("racy" in git's words): only a stamp older than that is trusted later.
        settled = time.time_ns() - RACY_NS
        if stat.S_ISREG(info.st_mode) and max(info.st_mtime_ns, info.st_ctime_ns) < settled:
            self._stamps[path] = (stamp(info), entry)

    def changed_paths(self, base: str | None = None) -> list[str]:
        """Paths that differ from `base` (default the base commit): added, modified, deleted."""
        now, _ = self.snapshot(base=base)
        then = self.tree_entries(base or self.base_commit)
        return sorted(p for p in {*now, *then} if not leftover(p) and now.get(p) != then.get(p))

    def write_tree(self) -> tuple[str, list[str]]:
        """The tree object of what the work tree holds, and the paths left out with why."""
        entries, left_out = self.snapshot(write=True)
        last = self._last_tree
        if last is not None and (last.base_commit, last.entries) == (self.base_commit, entries):
            return last.tree, left_out + list(last.refused)
        objects = self.objects
        if (
            objects is not None
            and not self.prefix
            and all(plain_path(p, e.mode) for p, e in entries.items())
        ):
            # Every name is one git takes as it is: the trees are written here, no process.
            tree = objects.write_tree(entries)
            self._last_tree = _WrittenTree(self.base_commit, entries, tree, ())
            return tree, left_out
        self.state.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(prefix="snapshot-", suffix=".index", dir=self.state)
        os.close(handle)
        scratch = Path(name)
        scratch.unlink()  # git makes it anew: an empty file is no index
        if self.prefix:  # a subfolder: the rest of the repository as the base commit has it
            outside = self.git_ok("ls-tree", "-r", "-z", "--full-tree", self.base_commit)
            rows = [r + b"\0" for r in outside.split(b"\0") if r and not row_under(r, self.prefix)]
        else:
            rows = []
        rows += [
            f"{e.mode} {e.oid}\t{self.prefix}{p}".encode("utf-8", "surrogateescape") + b"\0"
            for p, e in entries.items()
        ]
        refused = []
        try:
            added = self.git(
                "update-index", "-z", "--index-info", input=b"".join(rows), index=scratch
            )
            if added.status != 0:
                raise GitFailed(f"git update-index failed: {added.err}")
            # git skips a path it will not hold (`.GIT`, `git~1`, a linked .gitmodules), said so.
            for line in added.err.splitlines():
                if line.startswith("Ignoring path "):
                    refused.append(f"{line.removeprefix('Ignoring path ')}: git refused it")
            tree = self.git_ok("write-tree", index=scratch).decode().strip()
        finally:
            scratch.unlink(missing_ok=True)
        self._last_tree = _WrittenTree(self.base_commit, entries, tree, tuple(refused))
        return tree, left_out + refused

    def diff(self, *args: str, against: str | None = None, base: str | None = None) -> str:
        """`git diff ARGS` between `base` (default the base commit) and `against` (default: what
        the tree holds now), from objects only: no external diff, no text conversion. With no
        ARGS (the review's diff), asked of the run's one `git diff-tree` (ADR 0092)."""
        other = against or self.write_tree()[0]
        base = self.base_commit if base in (None, "HEAD") else base
        key = (args, base, other)
        if key in self._diffs:
            return self._diffs[key]
        trees = self._trees_of(base, other) if not args and against is None else None
        if trees is not None:  # the review's diff: asked of the run's one diff-tree
            out = self._differ_started().patch(*trees)
        else:
            out = self.git_ok(
                "diff", "--no-ext-diff", "--no-textconv", "--no-color", *self._relative(),
                *args, base, other, "--",
            )  # fmt: skip
        text = out.decode("utf-8", "surrogateescape")
        if _OBJECT_ID.match(base) and _OBJECT_ID.match(other):  # ids: the same diff for ever
            while len(self._diffs) >= _KEPT_DIFFS:
                del self._diffs[next(iter(self._diffs))]  # the oldest first
            self._diffs[key] = text
        return text

    def _relative(self) -> tuple[str, ...]:
        return ("--relative=" + self.prefix.rstrip("/"),) if self.prefix else ()

    def _trees_of(self, base: str, tree: str) -> tuple[str, str] | None:
        """`base` (a commit or tree id) and the tree id `tree` as two tree ids, which is what
        diff-tree compares; None when `base` names neither."""
        if not (_OBJECT_ID.match(base) and _OBJECT_ID.match(tree)):
            return None
        if base not in self._tree_ids:
            found = self.reader().read(base)
            if found is None or found[1] not in ("commit", "tree"):
                return None
            self._tree_ids[base] = base if found[1] == "tree" else (commit_tree_id(found) or "")
        base_tree = self._tree_ids[base]
        return (base_tree, tree) if base_tree else None

    def _differ_started(self) -> TreeDiffer:
        if self._differ is None:
            self._differ = TreeDiffer(self.state, self._differ_argv, GIT_TIMEOUT_S)
        return self._differ

    def _differ_argv(self) -> tuple[list[str], dict[str, str]]:
        return self._piped_argv(None, *DIFF_TREE_ARGS, "--no-color", *self._relative())

    def kept_diff(self, against: str) -> str | None:
        """`diff(against=against)` with no options as it was last given, when it is kept (two
        object ids name the same diff for ever); `against` may be the commit ssw last set the
        branch to, which stands for its tree. None otherwise; never a git process."""
        if self._head is not None and self._head[0] == against:
            against = self._head[1]
        return self._diffs.get(((), self.base_commit, against))

    # -- the branch -----------------------------------------------------------------------------

    def head(self) -> str:
        """The branch's commit."""
        return self.git_ok("rev-parse", "--verify", f"{self.branch}^{{commit}}").decode().strip()

    def head_and_tree(self, fresh: bool = False) -> tuple[str, str]:
        """The branch's commit and that commit's tree: as ssw last set the branch (`set_head`,
        `commit`) unless `fresh`, else from one git process. Whoever commits on a remembered
        head learns of a branch moved meanwhile when update-ref refuses to move it."""
        if self._head is not None and not fresh:
            return self._head
        out = self.git_ok("rev-parse", f"{self.branch}^{{commit}}", f"{self.branch}^{{tree}}")
        commit, tree = out.decode().split()
        self._head = (commit, tree)
        return commit, tree

    def set_head(self, commit: str) -> None:
        """Remember that ssw set the branch to `commit` (its tree read through the reader)."""
        tree = commit_tree_id(self.reader().read(commit))
        self._head = (commit, tree) if tree is not None else None

    def commit(
        self,
        message: str,
        author: tuple[str, str],
        tree: str,
        parents: tuple[str, ...] | None = None,
    ) -> str:
        """Commit `tree` (from write_tree) on the branch, after `parents` (default: the branch's
        commit; none makes the branch); the new commit, written by ssw as commit-tree would
        (util/commit_object.py) or by commit-tree. No hook runs: update-ref starts none."""
        parents = (self.head(),) if parents is None else parents
        raw = message.encode("utf-8", "surrogateescape")
        commit = write_commit(self.state, self.git_dir, self.objects, raw, author, tree, parents)
        old = parents[0] if parents else ""  # the branch moves only from where ssw left it
        self._head = None  # where the branch is, should update-ref fail, is for git to say
        self.git_ok("update-ref", "-m", "ssw: commit the run's change", self.branch, commit, old)
        self._head = (commit, tree)
        last = self._last_tree
        if last is not None and last.tree == tree and not last.refused:
            # The commit's entries are the ones its tree was written from: no ls-tree to read
            # them back when the tree is next compared with it.
            self._trees[commit] = last.entries
        if self.checkout_index is not None:
            self.git_ok("read-tree", commit, index=self.checkout_index)
        return commit


class _TooLarge(Exception):
    """A file the snapshot leaves out for its size; the message names it."""
