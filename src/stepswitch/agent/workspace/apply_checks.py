"""What `ssw runs apply` judges before and after it changes the user's checkout: the paths the
commits it applies write, and whether anything git does not track lies there; what --force may
lift (gates that did not pass, links, submodules, big files, git's own configuration files,
drivers named for a written path); and, after, that every written file holds the bytes the gates
ran (docs/decisions/0045-apply-changes-nothing-it-was-not-asked-to.md)."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from stepswitch.errors import GitFailed
from stepswitch.records.run import RunRecord
from stepswitch.util.git import GitResult
from stepswitch.util.git_objects import LINK_MODE, SUBMODULE_MODE, blob_id, holdable, leftover
from stepswitch.util.safe_fs import Beneath, UnsafePath
from stepswitch.util.text import escape_controls

DEFAULT_MAX_FILE_MB = 10.0
GONE = "000000"  # diff-tree's mode of a path a commit deletes
# Files git (or a hook manager git starts) reads as configuration of the checkout they land in.
_GIT_CONFIG_NAMES = frozenset({".gitattributes"})  # at any depth: git reads each folder's
_TOP_CONFIG_NAMES = frozenset({".gitmodules", ".lfsconfig"})
_HOOK_CONFIG = ".pre-commit-config.yaml"  # the hooks `pre-commit install` makes a commit run
_HOOK_FOLDERS = frozenset({".githooks", ".husky"})
_MAX_PATHSPECS = 256
_GATES_SAID = {"failed": "failed", "not_run": "did not run", "none": "were none"}

# `git ARGS` on the user's checkout; input= its stdin, index= its GIT_INDEX_FILE.
Git = Callable[..., GitResult]


@dataclass(frozen=True)
class Written:
    """One path one of the applied commits writes, as diff-tree says it."""

    path: str
    mode: str  # the new mode; GONE when the commit deletes the path
    blob: str


def _out(git: Git, *args: str, input: bytes | None = None, index: Path | None = None) -> str:
    done = git(*args, input=input, index=index)
    if done.status != 0:
        raise GitFailed(f"git {args[0]} failed: {done.err}")
    return done.out


def written(git: Git, old: str, new: str) -> list[Written]:
    """Every path `new` adds, deletes, changes or changes the type of against `old`."""
    raw = _out(git, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", old, new)
    fields = raw.split("\0")
    found = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        parts = meta.lstrip(":").split()
        if len(parts) >= 4:
            found.append(Written(path, parts[1], parts[3]))
    return found


def _only(paths: list[str]) -> list[str]:
    """Pathspecs for these paths; none (everything, filtered after) when they are so many that
    the command line could pass the system's limit."""
    return ["--", *paths] if len(paths) <= _MAX_PATHSPECS else []


def unholdable(writes: list[Written]) -> list[str]:
    """Paths git must never write (`..`, `.git` in any case, an empty name): only a tree made by
    hand holds them."""
    return sorted({w.path for w in writes if not holdable(w.path)})


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def untracked_in_the_way(git: Git, top: Path, paths: Iterable[str]) -> list[str]:
    """What lies on the checkout's disk at a written path, or in place of a folder above it,
    that git does not track (ignored or not): `name` for a file or link, `name/` for a folder."""
    paths = sorted(set(paths))
    asked = sorted({p for path in paths for p in [*_parents(path), path]})
    if not asked:
        return []
    listed = _out(git, "--literal-pathspecs", "ls-files", "-z", "--full-name", *_only(asked))
    tracked = {p for p in listed.split("\0") if p}
    folders = {parent for t in tracked for parent in _parents(t)}  # those holding a tracked file
    in_the_way: set[str] = set()
    for path in paths:
        for place in [*_parents(path), path]:
            try:
                info = os.lstat(top / place)
            except (FileNotFoundError, NotADirectoryError):
                break  # nothing there, nor below
            except OSError:  # unreadable: what is there cannot be told, so it is in the way
                in_the_way.add(place)
                break
            if stat.S_ISDIR(info.st_mode):
                # A folder above a written path is the user's when git tracks nothing in it; at
                # the written path itself it is in the way whatever it holds.
                if place == path or place not in folders:
                    in_the_way.add(place + "/")
                    break
            elif place not in tracked:
                in_the_way.add(place)
                break
    return sorted(in_the_way)


def _hazard(w: Written, size: int | None, max_bytes: int) -> str | None:
    # Lower case: on a case-insensitive file system `.GitAttributes` is the same file.
    pure = PurePosixPath(w.path.lower())
    if pure.name in _GIT_CONFIG_NAMES or str(pure) in _TOP_CONFIG_NAMES:
        return f"it changes {w.path}, which git reads as configuration of your checkout"
    if str(pure) == _HOOK_CONFIG:
        return f"it changes {w.path}, which names the hooks your commits run"
    if _HOOK_FOLDERS & set(pure.parts[:-1]):
        return f"it changes {w.path}, in a hooks folder"
    if leftover(w.path):  # bytecode Python may load in place of its source
        return f"it adds {w.path}, bytecode or a tool's cache, which ssw's commits never hold"
    if w.mode == LINK_MODE:
        return f"it adds a link: {w.path}"
    if w.mode == SUBMODULE_MODE:
        return f"it adds a submodule: {w.path}"
    if size is not None and size > max_bytes:
        return f"{w.path} is {size / 2**20:.1f} MB, over the {max_bytes / 2**20:g} MB limit"
    return None


def _sizes(git: Git, blobs: list[str]) -> dict[str, int]:
    if not blobs:
        return {}
    listed = _out(git, "cat-file", "--batch-check", input="".join(b + "\n" for b in blobs).encode())
    sizes = {}
    for line in listed.splitlines():
        oid, kind, size = [*line.split(), "", "", ""][:3]
        if kind == "blob" and size.isdigit():
            sizes[oid] = int(size)
    return sizes


def configured(git: Git, section: str, keys: frozenset[str]) -> set[str]:
    """The names `<section>.<name>.<key>` of the user's configuration defines, for these keys
    (the filters and merge drivers a git command could start)."""
    done = git("config", "-z", "--get-regexp", rf"^{section}\.")  # exit 1: none
    names = set()
    for item in done.out.split("\0"):
        name, _, key = item.split("\n", 1)[0].removeprefix(f"{section}.").rpartition(".")
        if name and key.lower() in keys:
            names.add(name)
    return names


def _attrs(git: Git, paths: list[str], attr: str, index: Path | None) -> list[tuple[str, str]]:
    """(path, value) of `attr` for each path: the checkout's own attributes, or with `index`
    those that index holds (check-attr only reads; it starts nothing)."""
    if not paths:
        return []
    names = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    cached = ["--cached"] if index is not None else []
    fields = _out(git, "check-attr", *cached, "-z", "--stdin", attr, input=names, index=index)
    parts = fields.split("\0")
    return list(zip(parts[0::3], parts[2::3], strict=False))


def _attrs_both(git: Git, paths: list[str], attr: str, tip: str) -> list[tuple[str, str]]:
    """The checkout's and the run's tip's own attributes for these paths."""
    with tempfile.TemporaryDirectory(prefix="ssw-apply-") as scratch:
        index = Path(scratch) / "index"
        _out(git, "read-tree", tip, index=index)
        theirs = _attrs(git, paths, attr, index)
    return sorted(set(_attrs(git, paths, attr, None)) | set(theirs))


def forceable_refusals(
    record: RunRecord,
    tip: str,
    writes: list[Written],
    drivers: list[str],
    max_bytes: int,
    sizes: dict[str, int],
) -> list[str]:
    """Why apply would not take this change without --force, one phrase each."""
    why = []
    if record.outcome != "done":
        why.append(f"it ended {record.outcome} ({record.reason or 'no reason recorded'})")
    if record.gates_verdict != "passed":
        why.append(f"its gates {_GATES_SAID.get(record.gates_verdict, record.gates_verdict)}")
    if record.commit is not None and tip != record.commit:
        why.append(
            f"its branch moved past the commit its gates judged ({record.commit[:12]} -> "
            f"{tip[:12]})"
        )
    seen = set()
    for w in writes:
        if w.mode == GONE:
            continue
        said = _hazard(w, sizes.get(w.blob), max_bytes)
        if said is not None and said not in seen:
            seen.add(said)
            why.append(said)
    why += [f"your attributes give {d}: git would start that program on it" for d in drivers]
    return [escape_controls(w, keep_newlines=False) for w in why]


def blob_sizes(git: Git, writes: list[Written]) -> dict[str, int]:
    return _sizes(git, sorted({w.blob for w in writes if w.mode not in (GONE, SUBMODULE_MODE)}))


def filters_named(git: Git, paths: list[str], tip: str) -> list[str]:
    """`path filter=x` for each written path whose attributes (the checkout's or the tip's)
    name a filter the user's configuration defines."""
    defined = configured(git, "filter", frozenset({"clean", "smudge", "process"}))
    return [f"{p} filter={v}" for p, v in _attrs_both(git, paths, "filter", tip) if v in defined]


def merge_drivers_named(git: Git, paths: list[str], before: str, base: str, tip: str) -> list[str]:
    """`path merge=x` for each path both the user's branch and the run changed since `base`
    whose merge driver (its attribute, else `merge.default`) the user's configuration defines:
    git would start it (a configured driver even overrides git's own `text` and `union`)."""
    mine, at_base, theirs = (_entries(git, c, paths) for c in (before, base, tip))
    both = [p for p in paths if mine.get(p) != at_base.get(p) != theirs.get(p)]
    if not both:
        return []
    defined = configured(git, "merge", frozenset({"driver"}))
    default = git("config", "merge.default").out.strip() or "text"
    named = []
    for path, value in _attrs_both(git, both, "merge", tip):
        name = {"unspecified": default, "set": "text", "unset": "binary"}.get(value, value)
        if name in defined:
            named.append(f"{path} merge={name}")
    return sorted(set(named))


def not_as_judged(
    git: Git, top: Path, paths: list[str], before: str, base: str, tip: str
) -> list[str]:
    """The written paths whose bytes (or executable bit, or link) in the checkout are not the
    blob the new HEAD holds, or, where the user's branch had not touched them since `base`,
    not the run's blob at `tip`: what the gates ran."""
    sha256 = _out(git, "rev-parse", "--show-object-format").strip() == "sha256"
    now = _entries(git, "HEAD", paths)
    mine_before = _entries(git, before, paths)
    at_base = _entries(git, base, paths)
    at_tip = _entries(git, tip, paths)
    folders = {parent for p in now for parent in _parents(p)}  # a file turned into a folder
    wrong = []
    with Beneath(top) as tree:
        for path in paths:
            if path in folders and path not in now:
                continue  # what lies below it is checked path by path
            if mine_before.get(path) == at_base.get(path) and now.get(path) != at_tip.get(path):
                wrong.append(f"{path} (not the run's version)")
            elif not _on_disk_is(tree, path, now.get(path), sha256):
                wrong.append(path)
    return wrong


def _entries(git: Git, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    listed = _out(
        git, "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit, *_only(paths)
    )
    entries = {}
    for record in listed.split("\0"):
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if len(parts) == 3:
            entries[path] = (parts[0], parts[2])
    return entries


def _on_disk_is(tree: Beneath, path: str, entry: tuple[str, str] | None, sha256: bool) -> bool:
    try:
        if entry is None:
            return tree.stat(path) is None
        if entry[0] == SUBMODULE_MODE:  # git writes no file for it, at most an empty folder
            return True
        if entry[0] == LINK_MODE:
            parent = str(PurePosixPath(path).parent)
            tree.stat(parent)  # raises for a link on the way
            target = os.readlink(tree.root / path)
            return blob_id(os.fsencode(target), sha256) == entry[1]
        with tree.open_file(path) as handle:
            data = handle.read()
            executable = bool(os.fstat(handle.fileno()).st_mode & 0o100)
    except (UnsafePath, OSError):
        return False
    mode, blob = entry
    return blob_id(data, sha256) == blob and executable == (mode == "100755")
