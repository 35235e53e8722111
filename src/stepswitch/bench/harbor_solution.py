"""A foreign Harbor task's solution/solve.sh read as the files it writes and removes, and the
reference patch those make of the start (ADR 0037)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from stepswitch.bench.gitops import git
from stepswitch.bench.grading_layout import copy_tree
from stepswitch.bench.harbor_shell import Refused, file_inside, relative, split_words

# --- solution/solve.sh ---


def solution_writes(solution: Path, root: PurePosixPath) -> tuple[dict[str, bytes], list[str]]:
    """The files solve.sh writes (path relative to the work folder -> bytes) and removes."""
    where = "solution/solve.sh"
    solve = solution / "solve.sh"
    if not solve.is_file():
        raise Refused("no solution/solve.sh")
    writes: dict[str, bytes] = {}
    removes: list[str] = []

    def target(path: str) -> str:
        dest = PurePosixPath(path) if path.startswith("/") else root / path
        return relative(root, dest, where).as_posix()

    lines = solve.read_text("utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        heredoc = re.fullmatch(
            r"cat\s+(?:>\s*(\S+)\s+<<-?\s*(['\"]?)(\w+)\2|<<-?\s*(['\"]?)(\w+)\4\s*>\s*(\S+))", line
        )
        if heredoc:
            path = heredoc[1] or heredoc[6]
            quoted, end = (heredoc[2], heredoc[3]) if heredoc[1] else (heredoc[4], heredoc[5])
            body = []
            while i < len(lines) and lines[i].strip() != end:
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise Refused(f"{where}: the text for {path} has no end line {end}")
            i += 1
            text = "\n".join(body) + "\n"
            if not quoted and re.search(r"[$`\\]", text):
                raise Refused(f"{where}: the text for {path} expands variables (quote its {end})")
            writes[target(path)] = text.encode("utf-8")
            continue
        words = split_words(line, where)
        if words[0] == "set" or words == ["cd", str(root)]:
            continue
        if words[:2] == ["mkdir", "-p"]:
            for path in words[2:]:
                target(path)  # inside the work folder; the folders come with their files
            continue
        if words[0] == "rm" and len(words) >= 3 and words[1] in ("-f", "-rf"):
            for path in words[2:]:
                rel = target(path)
                removes.append(rel)
                writes.pop(rel, None)
            continue
        if words[0] == "cp" and len(words) in (3, 4) and words[-2].startswith("/solution/"):
            _copy_from_solution(solution, words, target, writes)
            continue
        raise Refused(f"{where} runs {line[:60]!r}: only writes of files are read")
    if not writes and not removes:
        raise Refused(f"{where} writes no file")
    return writes, removes


def _copy_from_solution(
    solution: Path, words: list[str], target: Any, writes: dict[str, bytes]
) -> None:
    """`cp FILE DEST` (DEST a file, or a folder ending in /) or `cp -r|-a DIR/. DEST` (the
    folder's files into DEST), FILE and DIR in /solution."""
    where = "solution/solve.sh"
    flags, source_arg, dest_arg = words[1:-2], words[-2], words[-1]
    source = file_inside(solution, source_arg.removeprefix("/solution/"), where)
    dest = target(dest_arg)
    if source.is_file() and not flags:
        into = dest_arg.endswith("/") or dest == "."
        writes[f"{dest}/{source.name}".removeprefix("./") if into else dest] = source.read_bytes()
        return
    if source.is_dir() and flags in (["-r"], ["-a"], ["-R"]) and source_arg.endswith("/."):
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            rel = file.relative_to(source).as_posix()
            writes[f"{dest}/{rel}".removeprefix("./")] = file.read_bytes()
        return
    raise Refused(f"{where}: {' '.join(words)!r} is not a copy of a file or of DIR/. it reads")


def reference_patch(repo: Path, files: Path, deletions: tuple[str, ...], scratch: Path) -> str:
    """The reference as `git diff` output: repo/ with `files` over it and `deletions` made."""
    tree = scratch / "tree"
    copy_tree(repo, tree)
    git(tree, "init", "-q")
    git(tree, "add", "-A")
    git(tree, "-c", "user.name=ssw", "-c", "user.email=ssw@localhost", "commit", "-qm", "start")
    shutil.copytree(files, tree, dirs_exist_ok=True)
    for rel in deletions:
        path = tree / rel
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    # A fresh index: git hashes every file again. With the old one, a file the copy kept the
    # size and the second of (copytree keeps the solution's times) looked unchanged to git.
    (tree / ".git" / "index").unlink()
    git(tree, "add", "-A")
    return git(tree, "diff", "--cached", "--binary")
