"""One `git diff-tree --stdin` for a run's tree: the patch between two trees, asked of one
long-lived process instead of a `git diff` per review (issue 48,
docs/decisions/0092-review-diffs-from-one-diff-tree.md).

Each question is the line `<tree> <tree>`; git answers with that line, then the patch. A line
git cannot read as an object id it writes back as it came, and flushes: that line, sent after
each question, marks where the answer ends. It starts with `ssw-`, which no patch line can be
(every line of a patch starts with a space, `+`, `-`, `\\`, `@` or a header word, and a name
with a line break in it is quoted), and git never takes it for an object id.

The options are those of `git diff` between two trees with git's defaults (`-M`, as
`diff.renames` defaults to): the patch is byte for byte `git diff`'s, which tests compare; the
repository's own `diff.*` settings, which only `git diff` reads, do not change it.
"""

from __future__ import annotations

import time

from stepswitch.errors import GitFailed
from stepswitch.util.git_pipe import PipedGit, send

# `-p -M`: the patch, renames found, as `git diff` gives them; no external diff, no textconv.
DIFF_TREE_ARGS = ("diff-tree", "--stdin", "-p", "-M", "--no-ext-diff", "--no-textconv")
_END = b"ssw-end-of-patch"


class TreeDiffer(PipedGit):
    """`git diff-tree --stdin -p -M` with the command line `command()` gives (TreeGit's: its
    git folder and work tree, `--relative` for a subfolder), run in `cwd`."""

    def patch(self, old: str, new: str) -> bytes:
        """The patch from tree (or commit) `old` to `new`. GitFailed or GitTimedOut when git
        cannot say (the process is then ended)."""
        question = f"{old} {new}\n".encode("ascii")
        return self.answer(lambda: self._ask(question))

    def _ask(self, question: bytes) -> bytes:
        proc = self.started()
        writer = send(proc, question + _END + b"\n")
        deadline = time.monotonic() + self.timeout
        chunks: list[bytes] = []
        tail = b"\n"  # the answer's start counts as a line's: no patch, no header, the mark
        try:
            while not tail.endswith(b"\n" + _END + b"\n"):
                chunk = self.read_some(proc, deadline, "git diff-tree")
                chunks.append(chunk)
                tail = (tail + chunk)[-(len(_END) + 2) :]
        finally:
            if writer is not None:
                writer.join()
        answer = b"".join(chunks)[: -(len(_END) + 1)]  # the mark and its line break
        if not answer.startswith(question):
            # git could not read a tree: it said so on its error output, and wrote no patch.
            raise GitFailed(f"git diff-tree could not compare {question.decode().strip()}")
        return answer[len(question) :]
