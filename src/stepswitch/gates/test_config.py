"""The tests gate's pytest configuration comes from the base commit, and a conftest.py the change
adds or edits outside the test folders is refused (docs/decisions/0021-*).

pytest reads its configuration (addopts, the plugins to load) from the worktree's root and loads
every conftest.py on the way to the tests it collects, the root's included, before any test runs:
a change could make every test pass without touching one. So:
- `pin_test_config`: the file pytest would have chosen at the base commit (read from git's
  objects, never the worktree) is copied into `config_folder()`, this process's own folder, which
  the run's sandbox shows read-only (agent/prepare.py); each test stage runs pytest with
  `-c <that copy>` and the worktree as rootdir and confcutdir (`pytest_config.pinned_args`). The
  worktree's own pytest.ini, tox.ini, ... are never read, and the stage's log says so. A
  confinement that does not show the folder gets the copy in the stage's scratch folder, written
  just before that stage's pytest starts.
- `check_test_config` (`ssw:test-config`): a conftest.py outside the test folders that differs
  from the base commit (added, edited, replaced, deleted) fails, naming it. Found by walking the
  worktree, not from git's list: a `.gitignore` the change writes hides a file from git, not
  from pytest. The test folders are the base configuration's testpaths; else, when the base
  commit has folders named tests, test or testing (or no test file outside the root), every
  folder of those names; else the folders that hold its test files. Never the root.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import stat
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from stepswitch.gates.base import LINK_MODE, BaseTree, BaseUnreadable, Entry, blob_id
from stepswitch.gates.protected import protected_verdict
from stepswitch.gates.pytest_config import (
    CONFIG_NAMES,
    ConfigFile,
    choose_config,
    from_options,
    pinned_args,
    words,
    write_config,
)
from stepswitch.gates.runner import GateResult
from stepswitch.util.sandbox import Confinement
from stepswitch.util.sandbox_backends import SandboxPolicy
from stepswitch.util.scratch import TEST_CONFIG_PREFIX, process_scratch

TEST_CONFIG_CHECK = "ssw:test-config"
TEST_CONFIG_FIX = (
    "Undo these changes: a conftest.py outside the test folders configures every test pytest "
    "runs. Put the fixtures new tests need in a conftest.py inside the test folders."
)
CONFTEST = "conftest.py"
TEST_FOLDER_NAMES = frozenset({"tests", "test", "testing"})
# pytest's own default `norecursedirs`: it never collects (nor loads a conftest.py) below them.
DEFAULT_NORECURSE = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)


# -- where the copies live ----------------------------------------------------------------------


@functools.cache
def config_folder() -> Path:
    """This process's folder for the copies of base configurations: made on first use, removed
    at exit; its owner lock lets `ssw runs clean` remove it once a killed process left it
    (util/scratch.py). A sandbox must show it read-only (agent/prepare.py adds it)."""
    return process_scratch(TEST_CONFIG_PREFIX)


def _covers(outer: Path, path: Path) -> bool:
    return path == outer or path.is_relative_to(outer)


def shows_read_only(policy: SandboxPolicy, folder: Path) -> bool:
    """Whether a command under `policy` sees `folder` read-only: the deepest policy path that
    holds it is a read-only one (at one depth writable beats read-only beats hidden)."""
    real = folder.resolve()
    best: tuple[int, int] | None = None
    for rank, paths in ((0, policy.hidden), (1, policy.read_only), (2, policy.writable)):
        for raw in paths:
            outer = Path(raw).resolve()
            if _covers(outer, real):
                key = (len(outer.parts), rank)
                best = key if best is None or key > best else best
    return best is not None and best[1] == 1


def _home_for_copies(confinement: Confinement | None, scratch: Path) -> Path:
    if confinement is None or not confinement.sandbox.confines:
        return config_folder()  # the command sees the host's folders as they are
    folder = config_folder()
    return folder if shows_read_only(confinement.policy, folder) else scratch


# -- the base commit's configuration ------------------------------------------------------------


@dataclass(frozen=True)
class PinnedConfig:
    """What one test stage gives pytest: its arguments, and the line its log starts with."""

    args: tuple[str, ...]
    note: str


def _base_file(base: BaseTree, commit: str) -> ConfigFile | None:
    return choose_config(lambda name: base.read(commit, name))


def _at_base(base: BaseTree, rev: str) -> tuple[ConfigFile | None, dict[str, Entry]] | None:
    """The base commit's pytest configuration file and its files; None when unreadable."""
    try:
        commit = base.commit(rev)
        return _base_file(base, commit), base.entries(commit)
    except BaseUnreadable:
        return None


def _differs(root: Path, entries: Mapping[str, Entry], rel: str) -> bool:
    """Whether the worktree's `rel` is not what the base commit holds (added, edited, gone)."""
    entry = entries.get(rel)
    path = root / rel
    if entry is None:
        return os.path.lexists(path)
    return _change(path, entry) is not None


def pin_test_config(
    base: BaseTree | None,
    root: Path,
    rev: str,
    confinement: Confinement | None,
    scratch: Path,
) -> PinnedConfig | None:
    """pytest's configuration for a test stage running in `root`: the base commit's file, copied
    into `config_folder()`, which the sandbox shows read-only, or into `scratch` (the stage's own
    folder, just before its pytest starts) under a sandbox that does not show it. None without a
    base commit to read it from (a folder outside any repository, a repository without
    commits): pytest then finds its own."""
    if base is None:
        return None
    found = _at_base(base, rev)
    if found is None:
        return None
    chosen, entries = found
    data = chosen.data if chosen is not None else b""
    name = chosen.name if chosen is not None else "-"
    digest = hashlib.sha256(name.encode() + b"\0" + data).hexdigest()[:16]
    copy = write_config(chosen, _home_for_copies(confinement, scratch) / digest)
    shown = f"the base commit's {chosen.name}" if chosen else "none at the base commit (empty)"
    note = f"pytest configuration: {shown}, from {copy}, rootdir {os.path.realpath(root)}"
    ignored = [n for n in CONFIG_NAMES if _differs(root, entries, n)]
    if ignored:
        note += f"; this change's {', '.join(ignored)} not read"
    return PinnedConfig(tuple(pinned_args(copy, root, chosen)), note)


# -- conftest.py outside the test folders -------------------------------------------------------


@dataclass(frozen=True)
class TestFolders:
    """Where a change may add or edit a conftest.py: below one of `testpaths` (globs), below a
    folder of one of `names`, or below one of `folders`; never at the root."""

    __test__ = False  # not a pytest test class

    testpaths: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()

    def holds(self, folder: str) -> bool:
        if folder in ("", "."):
            return False
        parts = PurePosixPath(folder).parts
        upward = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        if self.testpaths:
            return any(fnmatch.fnmatchcase(f, t) for f in upward for t in self.testpaths)
        return bool(self.names & set(parts)) or any(f in self.folders for f in upward)

    def describe(self) -> str:
        if self.testpaths:
            return "testpaths: " + ", ".join(self.testpaths)
        shown = sorted(self.folders) if self.folders else sorted(f"{n}/" for n in self.names)
        return ", ".join(shown)


def folders_of_tests(paths: Iterable[str], options: Mapping[str, object]) -> TestFolders:
    """The test folders of a base commit holding `paths`, whose pytest options are `options`."""
    testpaths = []
    for raw in words(options, "testpaths"):
        path = PurePosixPath(raw).as_posix().removeprefix("./").rstrip("/")
        if path.endswith(".py"):  # a test file: its folder
            path = PurePosixPath(path).parent.as_posix()
        if path not in ("", "."):
            testpaths.append(path)
    if testpaths:
        return TestFolders(testpaths=tuple(testpaths))
    config = from_options(options)
    paths = list(paths)
    tests = [p for p in paths if config.is_test_file(p)]
    named = any(TEST_FOLDER_NAMES & set(PurePosixPath(p).parts[:-1]) for p in paths)
    folders = {PurePosixPath(p).parent.as_posix() for p in tests} - {"."}
    if named or not folders:  # no test file, or only at the root: where new ones would go
        return TestFolders(names=TEST_FOLDER_NAMES)
    return TestFolders(folders=frozenset(folders))


def _skipped(name: str, rel: str, folder: Path, norecurse: tuple[str, ...]) -> bool:
    """A folder pytest does not collect in, or that is not the project's: git's, ssw's, a
    virtual environment."""
    if name in (".git", ".ssw", "__pycache__") or (folder / "pyvenv.cfg").is_file():
        return True
    for pattern in norecurse:
        if "/" not in pattern:
            if fnmatch.fnmatchcase(name, pattern):
                return True
        elif fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, "*/" + pattern):
            return True
    return False


def conftests(root: Path, norecurse: tuple[str, ...]) -> Iterator[str]:
    """Every conftest.py in the worktree (relative posix) pytest could load, links included."""
    for here, dirs, files in os.walk(root):  # follows no link to a folder
        folder = Path(here)
        rel_here = folder.relative_to(root).as_posix()
        kept = []
        for name in sorted(dirs):
            rel = name if rel_here == "." else f"{rel_here}/{name}"
            if not _skipped(name, rel, folder / name, norecurse):
                kept.append(name)
        dirs[:] = kept
        if CONFTEST in files or os.path.islink(folder / CONFTEST):
            yield CONFTEST if rel_here == "." else f"{rel_here}/{CONFTEST}"


def _change(path: Path, entry: Entry) -> str | None:
    """What happened to the base commit's file at `path` (None: nothing that counts)."""
    try:
        info = path.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return "deleted"
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(path)
        same = entry.mode == LINK_MODE and blob_id(os.fsencode(target), entry.oid) == entry.oid
        return None if same else f"replaced by a symbolic link to {target}"
    if not stat.S_ISREG(info.st_mode):
        return "replaced by something that is not a file"
    if entry.mode == LINK_MODE:
        return "a symbolic link replaced by a file"
    try:
        data = path.read_bytes()
    except OSError:
        return "unreadable"
    return None if blob_id(data, entry.oid) == entry.oid else "edited"


def conftest_problems(
    root: Path, entries: Mapping[str, Entry], options: Mapping[str, object]
) -> list[str]:
    """One line per conftest.py outside the test folders that differs from the base commit's
    `entries` (paths relative to root; `options` are its pytest options)."""
    folders = folders_of_tests(entries, options)
    norecurse = words(options, "norecursedirs") or DEFAULT_NORECURSE
    where = f"outside the test folders ({folders.describe()})"
    found: dict[str, str] = {}
    for rel in conftests(root, norecurse):
        if folders.holds(PurePosixPath(rel).parent.as_posix()):
            continue
        entry = entries.get(rel)
        if entry is None:
            link = root / rel
            how = f"added as a symbolic link to {os.readlink(link)}" if link.is_symlink() else ""
            found[rel] = f"{rel}: {how or 'added'}, {where}"
        elif (what := _change(root / rel, entry)) is not None:
            found[rel] = f"{rel}: {what}, {where}"
    for rel in entries:
        if PurePosixPath(rel).name != CONFTEST or rel in found or os.path.lexists(root / rel):
            continue
        if not folders.holds(PurePosixPath(rel).parent.as_posix()):
            found[rel] = f"{rel}: deleted, {where}"
    return [found[rel] for rel in sorted(found)]


def check_test_config(base: BaseTree | None, root: Path, rev: str) -> GateResult | None:
    """`ssw:test-config`: fails, naming them, when conftest.py files outside the test folders
    differ from the base commit's. None without a base commit to compare with (the truth check
    says why when one was named and cannot be read)."""
    if base is None:
        return None
    began = time.monotonic()
    found = _at_base(base, rev)
    if found is None:
        return None
    chosen, entries = found
    options = chosen.options if chosen is not None else {}
    return protected_verdict(
        TEST_CONFIG_CHECK,
        conftest_problems(root, entries, options),
        time.monotonic() - began,
        "a conftest.py outside the test folders would configure every test",
        TEST_CONFIG_FIX,
    )
