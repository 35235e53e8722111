"""The gates' start-up module (`gates.interpreter`). Its folder is all PYTHONPATH holds when a
Python of the gates starts, so this is the `sitecustomize` that `site` imports, once site-packages
and their .pth files are in place. It imports nothing of Stepswitch: it runs in every Python the
gates and the model's commands start, under whatever interpreter that is.

It puts the folders of SSW_PYTHONPATH (the worktree's source folder first) on sys.path where its
own folder stands, ahead of the standard library and site-packages: sys.path ends up as it would
with them first on PYTHONPATH, but only after `site` has run, so no sitecustomize, usercustomize
or other module of the worktree runs at start-up. Before that, the interpreter's own
sitecustomize, if it has one in its own prefix (which the tests cannot write), runs as it would
have without this one.
"""

from __future__ import annotations

import os
import sys

PATH_NAME = "SSW_PYTHONPATH"
HERE = os.path.dirname(os.path.abspath(__file__))


def _is_here(entry: str) -> bool:
    return bool(entry) and os.path.abspath(entry) == HERE


def _own_folders() -> list[str]:
    """The sys.path entries inside the interpreter's own prefixes, but this module's."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    own = [os.path.realpath(p) for p in prefixes]
    found = []
    for entry in sys.path:
        real = os.path.realpath(entry) if entry and not _is_here(entry) else ""
        if real and any(real == p or real.startswith(p + os.sep) for p in own):
            found.append(entry)
    return found


def _run_own_sitecustomize() -> None:
    import importlib.machinery  # not importlib.util: it would double the cost of every start

    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _own_folders())
    if spec is None or spec.loader is None:
        return
    module = type(sys)(spec.name)
    module.__spec__, module.__loader__ = spec, spec.loader
    module.__file__, module.__cached__ = spec.origin, spec.cached  # type: ignore[attr-defined]
    sys.modules["sitecustomize"] = module  # what `import sitecustomize` then hands to site
    spec.loader.exec_module(module)


def _put_paths_in_place() -> None:
    """SSW_PYTHONPATH where this folder's first entry is; its other entries dropped."""
    wanted = [p for p in os.environ.get(PATH_NAME, "").split(os.pathsep) if p]
    at = [i for i, entry in enumerate(sys.path) if _is_here(entry)]
    if not at:
        return
    first = at[0]
    kept = [entry for i, entry in enumerate(sys.path) if i not in at[1:]]
    sys.path[:] = kept[:first] + wanted + kept[first + 1 :]


try:
    _run_own_sitecustomize()
finally:
    _put_paths_in_place()
