"""One `git check-ignore --stdin` for a run's tree: which of a few paths git's ignore rules
leave out, asked of one long-lived process instead of a whole `ls-files` per review (issue 48,
docs/decisions/0090-new-paths-asked-of-one-check-ignore.md).

git reads the ignore rules it needs as it meets each folder and keeps them: an answer holds
for the rules the process started with. util/tree_shape.py's KeptListing asks only while the
rules are byte for byte those (it closes the checker when they change), and only about paths
whose folders hold no `.git`.

Each path is sent as `./PATH`: a name git would read as pathspec magic (`:!x`, `:(top)x`) is
then a name like any other. With `--verbose --non-matching` git answers every path, in order,
with the pattern that decided it (empty for none, `!...` for a negated one: not ignored).
"""

from __future__ import annotations

import time

from stepswitch.errors import GitFailed
from stepswitch.util.git_pipe import PipedGit, send

_FIELDS = 4  # source, line number, pattern, path: each NUL-terminated


class IgnoreChecker(PipedGit):
    """`git check-ignore --stdin -z --verbose --non-matching`, started on the first question,
    with the command line and environment `command()` gives (TreeGit's: its excludes file, its
    empty index, its git folder and work tree), run in `cwd`."""

    def ignored(self, paths: list[str]) -> set[str]:
        """Those of `paths` (relative to the work tree's top, files) that git ignores.
        GitFailed or GitTimedOut when git cannot say (the process is then ended)."""
        if not paths:
            return set()
        return self.answer(lambda: self._ask(paths))

    def _ask(self, paths: list[str]) -> set[str]:
        if any("\0" in p or not p for p in paths):
            raise GitFailed("git check-ignore: an empty path or one holding a NUL")
        proc = self.started()
        request = b"".join(f"./{p}\0".encode("utf-8", "surrogateescape") for p in paths)
        writer = send(proc, request)
        deadline = time.monotonic() + self.timeout
        chunks: list[bytes] = []
        fields_read = 0
        try:
            while fields_read < _FIELDS * len(paths):
                chunks.append(self.read_some(proc, deadline, "git check-ignore"))
                fields_read += chunks[-1].count(b"\0")
        finally:
            if writer is not None:
                writer.join()
        fields = b"".join(chunks).split(b"\0")
        ignored = set()
        for at, path in enumerate(paths):
            pattern = fields[at * _FIELDS + 2]
            if fields[at * _FIELDS + 3] != f"./{path}".encode("utf-8", "surrogateescape"):
                raise GitFailed("git check-ignore answered for another path")
            if pattern and not pattern.startswith(b"!"):
                ignored.add(path)
        return ignored
