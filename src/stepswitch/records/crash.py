"""A harness error as data, as Harbor keeps a trial's exception: the formatted traceback that
goes into run.json (`RunRecord.traceback`), with no absolute machine path in it, since run
folders end up in committed evidence. A file of ssw reads `stepswitch/...`; another file (the
standard library, another package, a test) reads as a path inside the import path entry that
holds it, or as its name alone."""

from __future__ import annotations

import re
import sys
import traceback
from pathlib import Path

# The folder that holds the stepswitch package (src/, or site-packages/ when installed), as
# imported and as resolved.
_PACKAGE = Path(__file__).parent.parent
_PACKAGE_PARENTS = tuple(dict.fromkeys((_PACKAGE.parent, _PACKAGE.resolve().parent)))
TRACEBACK_CHARS = 16_000  # the end is kept: the frame that raised and the error itself
_FILE = re.compile(r'File "([^"]+)"')


def crash_traceback(exc: BaseException) -> str:
    """`exc`'s traceback as Python prints it (its causes and contexts too), paths shortened."""
    text = "".join(traceback.format_exception(exc))
    text = _FILE.sub(lambda m: f'File "{_short_path(m.group(1))}"', text)
    for parent in _PACKAGE_PARENTS:  # a message may name ssw's own files too
        text = text.replace(f"{parent.as_posix()}/", "")
    if len(text) > TRACEBACK_CHARS:
        text = f"[{len(text) - TRACEBACK_CHARS} chars cut]\n" + text[-TRACEBACK_CHARS:]
    return text


def _short_path(name: str) -> str:
    """A traceback's file name without the machine's part of it."""
    path = Path(name)
    if not path.is_absolute():
        return name  # "<string>", a frozen module: no machine path
    roots = sorted({Path(p) for p in sys.path if p and Path(p).is_absolute()}, key=_depth)
    for root in (*_PACKAGE_PARENTS, *roots):
        if path.is_relative_to(root):
            return path.relative_to(root).as_posix()
    return path.name


def _depth(path: Path) -> int:
    return -len(path.parts)  # the deepest entry first: site-packages before the prefix it is in
