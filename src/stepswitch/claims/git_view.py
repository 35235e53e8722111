"""What git can tell the claims engine about commits (`GitView`: whether one exists, when it
was committed, which descends from which, a file's committed versions) and the commit a
registration is made at (`head_commit`); an answer git cannot give is None, never a refusal."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from stepswitch.errors import UsageError
from stepswitch.util.git import git_answer, run_git


def head_commit(root: Path) -> str:
    commit = git_answer(root, "rev-parse", "--verify", "HEAD")
    if commit is None:
        raise UsageError(f"{root} has no git commit to register claims against: commit first")
    return commit


def parse_time(text: str) -> datetime | None:
    """An ISO date or date-time; a date alone is its first second (the earliest it can have
    been), a time without an offset is UTC. None when it is neither."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@functools.lru_cache(maxsize=256)
def _answer(root: Path, *args: str) -> str | None:
    """git's answer about objects, which never changes once given (kept for the process)."""
    return git_answer(root, *args)


def _shown(root: Path, names: tuple[str, ...]) -> dict[str, str | None]:
    """What `git show NAME` answers (as git_answer gives it) for each `<commit>:./<path>` in
    `names`, asked of one `git cat-file --batch` instead of one git per name. A name git has no
    object for is None, as `show` finds none; one that is no blob (a folder), or that cannot be
    asked on one line, or every name when the batch fails, is asked of `git show` as before."""
    found: dict[str, str | None] = {}
    batch = [name for name in names if "\n" not in name]
    asked = "".join(f"{name}\n" for name in batch).encode("utf-8", "surrogateescape")
    try:
        done = run_git(root, "cat-file", "--batch", input=asked, user_config=True)
    except UsageError:
        done = None
    if done is not None and done.status == 0:
        out, at = done.stdout, 0
        for name in batch:
            end = out.index(b"\n", at)
            header = out[at:end].split(b" ")  # "<id> <kind> <size>", or "<name> missing"
            at = end + 1
            if not header[-1].isdigit():
                found[name] = None  # nothing follows the line
                continue
            size = int(header[-1])
            if header[1] == b"blob":
                found[name] = out[at : at + size].decode("utf-8", "surrogateescape").strip()
            at += size + 1  # the object and the newline after it
    return {name: found[name] if name in found else _answer(root, "show", name) for name in names}


@dataclass(frozen=True)
class GitView:
    """What git can tell about commits; None answers mean it cannot tell (no git, a shallow
    clone), and then nothing is refused on its account."""

    root: Path

    def exists(self, commit: str) -> bool | None:
        if _answer(self.root, "cat-file", "-e", f"{commit}^{{commit}}") is not None:
            return True
        if git_answer(self.root, "rev-parse", "--git-dir") is None:
            return None
        shallow = git_answer(self.root, "rev-parse", "--is-shallow-repository")
        return None if shallow == "true" else False

    def committed_at(self, commit: str) -> datetime | None:
        text = _answer(self.root, "show", "-s", "--format=%cI", commit)
        return None if text is None else parse_time(text)

    def is_ancestor(self, older: str, newer: str) -> bool | None:
        if not (self.exists(older) and self.exists(newer)):
            return None
        found = _answer(self.root, "merge-base", "--is-ancestor", older, newer)
        return found is not None

    def versions(self, rel: str, since: str | None = None) -> list[tuple[str, str]]:
        """(commit, text) of each committed version of `rel` reachable from HEAD, newest first;
        with `since`, only that commit's and its descendants'; empty when git cannot tell."""
        # --ancestry-path alone lists a merge that changed nothing in `rel`; --simplify-merges
        # drops it again, and keeps a merge whose version is neither parent's.
        span = ("--ancestry-path", "--simplify-merges", f"{since}..HEAD") if since else ()
        listed = git_answer(self.root, "log", "--format=%H", *span, "--", rel)
        if since and listed is not None:
            listed += f"\n{since}"  # the anchor's own version, oldest
        commits = (listed or "").split()
        shown = _shown(self.root, tuple(f"{commit}:./{rel}" for commit in commits))
        found = []
        for commit in commits:
            text = shown[f"{commit}:./{rel}"]
            if text is not None:
                found.append((commit, text))
        return found

    def is_shallow(self) -> bool:
        """A shallow clone: the history stops at a depth, so a commit it lacks may still be."""
        return git_answer(self.root, "rev-parse", "--is-shallow-repository") == "true"

    def is_git(self) -> bool:
        return git_answer(self.root, "rev-parse", "--git-dir") is not None

    def in_history(self, commit: str) -> bool | None:
        """Whether `commit` (a full or abbreviated hash) is HEAD or one of its ancestors; None
        when git cannot tell (no git, a shallow clone that lacks it)."""
        full = _answer(self.root, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        if full is None:
            return None if not self.is_git() or self.is_shallow() else False
        return _answer(self.root, "merge-base", "--is-ancestor", full, "HEAD") is not None

    def has_history(self) -> bool:
        """A git checkout whose history is whole (not shallow): what it does not show, was not."""
        if git_answer(self.root, "rev-parse", "--git-dir") is None:
            return False
        return git_answer(self.root, "rev-parse", "--is-shallow-repository") == "false"

    def added_in(self, rel: str) -> str | None:
        """The commit that first added `rel` (reachable from HEAD); None when none did."""
        listed = git_answer(self.root, "log", "--diff-filter=A", "--format=%H", "--", rel)
        found = (listed or "").split()
        return found[-1] if found else None
