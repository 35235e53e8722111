"""Tests keep their original meaning: a test file of the base commit that the change edited or
deleted also runs as the base commit has it, against the changed code, and its failure fails the
gates naming the test. Without it a change could weaken the test that checks it and pass.

A conftest.py the change added or edited inside the test folders (outside them `ssw:test-config`
refuses it) changes how every test below it runs, and can rig what pytest reports about them:
the base commit's test files under its folder run here too, with the base commit's conftest.py
(or none, where it had none), so the tests the project had still judge the change unrigged.

It runs in a copy of the tree as it stands (made in the gates' TMPDIR, the same folder inside the
sandbox and out), with the base commit's versions of those test files, and of the conftest.py
files above them, written over the change's: the agent's worktree is never written. A
repository whose tasks must change behaviour opts out with `test_changes = "allowed"` in its
tests gate's table.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from stepswitch.gates.base import BaseTree
from stepswitch.gates.impacted import is_test_file
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.safe_fs import Beneath, UnsafePath

AS_BEFORE = "tests:as-before"


def changed_conftests(changed: list[str]) -> list[str]:
    """The conftest.py files among `changed` (added, edited or deleted by the change)."""
    return sorted(p for p in changed if PurePosixPath(p).name == "conftest.py")


def changed_base_tests(base: BaseTree, commit: str, changed: list[str]) -> list[str]:
    """The base commit's test files among `changed` (edited or deleted by the change), and
    those under the folder of a conftest.py the change added, edited or deleted."""
    entries = base.entries(commit)
    found = {p for p in changed if p in entries and is_test_file(p)}
    for conftest in changed_conftests(changed):
        folder = PurePosixPath(conftest).parent
        found |= {p for p in entries if is_test_file(p) and PurePosixPath(p).is_relative_to(folder)}
    return sorted(found)


def _conftests_above(tests: list[str], entries: set[str]) -> list[str]:
    found: set[str] = set()
    for test in tests:
        for folder in PurePosixPath(test).parents:
            candidate = (folder / "conftest.py").as_posix().removeprefix("./")
            if candidate in entries:
                found.add(candidate)
    return sorted(found)


def lay_out_as_before(
    tree: TreeGit,
    base: BaseTree,
    commit: str,
    tests: list[str],
    scratch: Path | None,
    conftests: Sequence[str] = (),
) -> tuple[Path, Path]:
    """A new folder holding the tree as it stands with `tests` (and the conftest.py files above
    them, and `conftests`) as the base commit has them, a conftest.py it lacks removed: the
    folder, and the gates' root in it. Raises UnsafePath when the change made a folder on
    their way a link."""
    copy = Path(tempfile.mkdtemp(prefix="ssw-as-before-", dir=scratch))
    try:
        snapshot, _ = tree.write_tree()
        tree.check_out(snapshot, copy)
        root = copy  # check_out writes the prefix's files at the top of `copy`
        entries = set(base.entries(commit))
        with Beneath(root) as folder:
            for rel in sorted({*tests, *_conftests_above(tests, entries), *conftests}):
                data = base.read(commit, rel) if rel in entries else None
                if data is not None:
                    folder.write(rel, data, make_folders=True)
                elif rel not in entries:
                    _remove_beneath(folder, rel)
    except BaseException:
        shutil.rmtree(copy, ignore_errors=True)
        raise
    return copy, root


def _remove_beneath(folder: Beneath, rel: str) -> None:
    """Remove the file `rel` of `folder` without following a link on its way."""
    parent, name = PurePosixPath(rel).parent.as_posix(), PurePosixPath(rel).name
    try:
        fd = folder.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return
    try:
        os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(fd)


__all__ = [
    "AS_BEFORE",
    "UnsafePath",
    "changed_base_tests",
    "changed_conftests",
    "lay_out_as_before",
]
