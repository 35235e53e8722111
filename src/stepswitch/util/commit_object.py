"""The run's commit object made by ssw: the bytes `git commit-tree TREE -p PARENT -F -` stores,
so the commit is one more loose object (util/loose_objects.py) and not a git process
(issue 48, docs/decisions/0089-the-runs-commit-without-commit-tree.md).

commit-tree writes `tree`, `parent`, `author` and `committer` lines, an empty line and the
message as it was given (no cleanup). It writes more, or other bytes, when the repository's
configuration asks (`i18n.commitEncoding`, `extensions.compatObjectFormat`, anything included
from another file), when a name or email holds what git trims or drops, and when the message is
not UTF-8 as git checks it (git then rewrites it as Latin-1): `commit_body` returns None for
every such case and git writes the commit, as before.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from stepswitch.errors import GitFailed
from stepswitch.util.git import run_git
from stepswitch.util.git_config_files import may_mention
from stepswitch.util.loose_objects import LooseObjects

# What git trims from both ends of a name or email (ident.c `crud`); '<', '>' and a newline it
# drops anywhere.
_CRUD = frozenset(".,:;<>\"\\'")
# Configuration that changes what commit-tree writes, or may (an included file): lower case.
_ASKS_OF_COMMIT_TREE = (b"commitencoding", b"compatobjectformat", b"include")


@dataclass(frozen=True)
class Signature:
    """An author or committer line's identity and time: seconds since the epoch and the
    offset east of UTC in minutes, as git writes them."""

    name: str
    email: str
    when: int
    offset: int

    def line(self) -> bytes:
        sign = "-" if self.offset < 0 else "+"
        hours, minutes = divmod(abs(self.offset), 60)
        text = f"{self.name} <{self.email}> {self.when} {sign}{hours:02d}{minutes:02d}"
        return text.encode("utf-8")


def signature_now(name: str, email: str) -> Signature:
    """`name <email>` now, as git dates a commit given no date."""
    return signature_at(name, email, int(time.time()))


def signature_at(name: str, email: str, when: int) -> Signature:
    """`name <email>` at `when`, with the offset git takes for it: the local time's distance
    from UTC in whole minutes, truncated toward zero (date.c `datestamp`)."""
    east = time.localtime(when).tm_gmtoff
    return Signature(name, email, when, int(east / 60))


def _plain_ident(text: str) -> bool:
    """Whether git writes `text` as it is in an ident line (nothing trimmed or dropped)."""
    if not text or any(c in "<>\n" for c in text):
        return False
    return all(ord(c) > 32 and c not in _CRUD for c in (text[0], text[-1]))


def _valid_utf8(data: bytes) -> bool:
    """UTF-8 as git's commit.c checks it: no surrogate, no overlong form, and no noncharacter
    (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF), which git takes for Latin-1 and rewrites."""
    try:
        text = data.decode("utf-8")  # Python refuses surrogates and overlong forms
    except UnicodeDecodeError:
        return False
    return not any(
        0xFDD0 <= ord(c) <= 0xFDEF or (ord(c) & 0xFFFE) == 0xFFFE for c in text if ord(c) > 0xFDCF
    )


def config_asks_nothing(git_dir: Path) -> bool:
    """Whether the repository's configuration leaves commit-tree's bytes as described above
    (system and user configuration are off for ssw's git: util/git.py)."""
    files = [git_dir / "config", git_dir / "config.worktree"]
    return not may_mention(files, _ASKS_OF_COMMIT_TREE)


def commit_body(
    tree: str, parents: tuple[str, ...], author: Signature, committer: Signature, message: bytes
) -> bytes | None:
    """The commit object's content as commit-tree writes it; None when git would write other
    bytes than these (see the module's note) and must write it itself."""
    if b"\0" in message or not all(
        _plain_ident(t) for t in (author.name, author.email, committer.name, committer.email)
    ):
        return None
    lines = [b"tree " + tree.encode()]
    lines += [b"parent " + p.encode() for p in dict.fromkeys(parents)]  # git drops a repeat
    lines += [b"author " + author.line(), b"committer " + committer.line()]
    body = b"\n".join(lines) + b"\n\n" + message
    return body if _valid_utf8(body) else None


def write_commit(
    cwd: Path,
    git_dir: Path,
    objects: LooseObjects | None,
    message: bytes,
    author: tuple[str, str],
    tree: str,
    parents: tuple[str, ...],
) -> str:
    """Store the commit of `tree` after `parents` by `author` (author and committer, now) with
    `message`; its id. Written here as a loose object, else by `git commit-tree` (a git folder
    without its own objects, or any case `commit_body` leaves to git). No hook runs."""
    if objects is not None and config_asks_nothing(git_dir):
        signed = signature_now(*author)
        body = commit_body(tree, parents, signed, signed, message)
        if body is not None:
            return objects.write(b"commit", body)
    name, email = author
    identity = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "PATH": os.environ.get("PATH", os.defpath),
    }
    done = run_git(
        cwd,
        "commit-tree",
        tree,
        *(arg for parent in parents for arg in ("-p", parent)),
        "-F",
        "-",
        input=message,
        env=identity,
        git_dir=git_dir,
    )
    if done.status != 0:
        raise GitFailed(f"git commit-tree failed: {done.err}")
    return done.out.strip()
