"""The TreeGit of a folder the user points ssw at (`ssw gates`, the library, the gates' own
tests): a folder of a checkout, at its HEAD, or a run's work tree, at its branch."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from stepswitch.util.git import Checkout, discover, run_git
from stepswitch.util.git_objects import EMPTY_TREE
from stepswitch.util.git_tree import TreeGit
from stepswitch.util.scratch import GIT_PREFIX, process_scratch

# Where `ssw run` puts a run's work tree in the checkout (agent/workspace/worktree.py).
_RUN_WORKTREE = re.compile(r"\.ssw/worktrees/([A-Za-z0-9][A-Za-z0-9._-]*)/(.*)\Z")


def _run_tree(found: Checkout, run_id: str, rest: str) -> TreeGit | None:
    branch = f"refs/heads/ssw/{run_id}"
    head = run_git(found.top, "rev-parse", "--verify", "--quiet", branch, git_dir=found.common_dir)
    if head.status != 0:
        return None
    return TreeGit(
        git_dir=found.common_dir,
        work_tree=found.top / ".ssw" / "worktrees" / run_id,
        state=_scratch(),
        branch=branch,
        base_commit=head.out.strip(),
        excludes_file=found.excludes_file,
        prefix=rest,
    )


@functools.cache
def _scratch() -> Path:
    # ssw's own, made fresh: nothing another process planted can be read as an index there. Its
    # owner lock lets `ssw runs clean` remove it once this process is gone (util/scratch.py).
    return process_scratch(GIT_PREFIX)


def checkout_tree(root: Path) -> TreeGit | None:
    """The user's checkout holding `root` (a folder in it, or its top) as a TreeGit at its
    HEAD commit (the empty tree before the first commit), for `ssw gates`, the library and the
    gates' own tests; None outside a repository. UnsafeCheckout when that commit holds a path
    no check-out may write (util/tree_checkout.py)."""
    found = discover(root)
    if found is None:
        return None
    prefix = root.resolve().relative_to(found.top.resolve()).as_posix()
    run = _RUN_WORKTREE.match(prefix + "/")
    if run is not None:  # a run's work tree: git would take it for a folder of the checkout
        tree = _run_tree(found, run.group(1), run.group(2))
    else:
        tree = _checkout_tree(found, prefix)
    if tree is not None:
        tree.tree_entries(tree.base_commit)  # UnsafeCheckout now, not in the middle of the gates
    return tree


def _checkout_tree(found: Checkout, prefix: str) -> TreeGit:
    return TreeGit(
        git_dir=found.git_dir,  # its own: HEAD is this checkout's, the rest is found from it
        work_tree=found.top,
        state=_scratch(),
        checkout_index=found.git_dir / "index",
        branch=f"refs/heads/{found.branch}" if found.branch else "HEAD",
        base_commit=found.head or EMPTY_TREE,
        excludes_file=found.excludes_file,
        prefix="" if prefix == "." else prefix + "/",
    )
