"""The checks that run before the gates, against the base commit; each adds a verdict only when it
fails, and then no gate runs.

`ssw:protected` (the truth check): the files the gates' truth lives in (configuration, golden
files, protected paths) compared with the base commit, and new symbolic links. `ssw:shadowing`:
modules the change added that shadow the standard library or an installed distribution, and
packages beside a module of the same name (`gates.shadowing`). `ssw:test-config`: pytest's
configuration and conftest files (`gates.test_config.check_test_config`). `ssw:left-out`, in a
run's worktree only: files the run's commit leaves out that Python or pytest would load
(`gates.left_out`).
"""

from __future__ import annotations

import time
from pathlib import Path

from stepswitch.gates.base import BaseUnreadable, is_commit_id
from stepswitch.gates.context import GateContext
from stepswitch.gates.left_out import (
    LEFT_OUT_CHECK,
    LEFT_OUT_FIX,
    loadable_left_out,
    test_folders,
)
from stepswitch.gates.protected import protected_verdict
from stepswitch.gates.runner import GateResult
from stepswitch.gates.shadowing import (
    SHADOW_CHECK,
    SHADOW_FIX,
    added_metadata,
    shadowing_modules,
    twin_modules,
)
from stepswitch.gates.tree_diff import TreeView
from stepswitch.util.git_objects import MAX_FILE_BYTES

# The check of the files the gates' truth lives in: not a configurable gate (names have no ":").
TRUTH_CHECK = "ssw:protected"
TRUTH_FIX = (
    "Undo these changes: the gate configuration, the golden files and the protected paths are "
    "read from the base commit and may not change, nor be linked to; no link may lead outside "
    "the worktree."
)


def truth_check(context: GateContext, patterns: dict[str, str], base: str) -> GateResult | None:
    """The files the gates' truth lives in (`patterns`: the gate configuration,
    .stepswitch.toml, golden files, protected paths), and symbolic links, against the base
    commit: any change fails, naming the path. None when there is no base to compare with:
    outside a repository, or `base` a name (`ssw gates`: HEAD) in one without commits; a commit
    id that cannot be read fails."""
    if context.base is None:
        return None
    began = time.monotonic()
    try:
        commit = context.base.commit(base)
    except BaseUnreadable as exc:
        if not is_commit_id(base):
            return None
        return protected_verdict(TRUTH_CHECK, [str(exc)], time.monotonic() - began)
    try:
        view = TreeView(context.root, context.base, commit)
        problems = view.protected_changes(patterns)
        problems += view.new_links(patterns)
    except BaseUnreadable as exc:
        problems = [str(exc)]
    return protected_verdict(
        TRUTH_CHECK,
        problems,
        time.monotonic() - began,
        "the files the gates read their truth from changed",
        TRUTH_FIX,
    )


def shadow_check(context: GateContext, base: str) -> GateResult | None:
    """Modules the change added at the worktree's root or source root that shadow the standard
    library or an installed distribution (`gates.shadowing`): any fails, naming them. None
    without a base commit to tell added from the project's own."""
    if context.base is None:
        return None
    began = time.monotonic()
    try:
        commit = context.base.commit(base)
        base_paths = set(context.base.entries(commit))
    except BaseUnreadable:
        return None  # the truth check says why
    roots = (context.root, context.layout.source_root)
    problems = shadowing_modules(roots, context.root, base_paths, context.interpreter.python)
    if context.tree is not None:
        changed = context.tree.changed_paths(commit)
        problems += twin_modules(context.root, changed, base_paths)
        problems += added_metadata(context.root, changed)
    return protected_verdict(
        SHADOW_CHECK,
        problems,
        time.monotonic() - began,
        "the change adds modules imported instead of the standard library's or a package's",
        SHADOW_FIX,
    )


def left_out_check(context: GateContext) -> GateResult | None:
    """Files below an import root of the run's worktree that its commit leaves out (ignored) and
    Python or pytest would load: any fails, naming them. None without the run's work tree."""
    tree = context.tree
    if tree is None or not context.judges_commit:
        return None
    began = time.monotonic()
    # What the commit holds: the base commit's files and what git does not ignore, but a file
    # too big for it (as TreeGit.snapshot has them); git's listing only when some file is new.
    base = tree.tree_entries(tree.base_commit)
    found = loadable_left_out(context.root, set(base), test_folders(base))
    if found:
        listed, _ = tree.listed_paths()
        found = {
            path: why
            for path, why in found.items()
            if path not in listed or _too_big(context.root / path)
        }
    problems = [f"{path}: {why}, and the commit leaves it out" for path, why in found.items()]
    return protected_verdict(
        LEFT_OUT_CHECK,
        problems,
        time.monotonic() - began,
        "the tree holds files the commit leaves out, which the tests would load",
        LEFT_OUT_FIX,
    )


def _too_big(path: Path) -> bool:
    """A file git lists but the snapshot leaves out for its size (TreeGit.snapshot)."""
    try:
        return path.lstat().st_size > MAX_FILE_BYTES
    except OSError:
        return False
