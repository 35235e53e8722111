"""A tree changed in every way a patch or a line count tells apart: edits (with a CRLF line and
a line separator), a deletion, a rename, a mode change, a binary file, names needing quotes or not
UTF-8, an empty file, a file in a deep folder and a new link. For the tests that compare ssw's
diffs and counts with git's."""

from __future__ import annotations

import os
from pathlib import Path

from tests.harness.repo import write_repo

SHAPES_BASE = {
    "edit.py": "".join(f"line {n}\n" for n in range(30)),
    "gone.txt": "a\nb\n",
    "nonl.txt": "last",
    "mode.sh": "#!/bin/sh\n",
    "old_name.py": "".join(f"same {n}\n" for n in range(20)),
    "blank.txt": "a\n\nb\n\nc\n",
    "tab\tname.txt": "t\n",
    "sub/deep/x.txt": "x\n",
    "sub/kept.txt": "k\n",
}


def write_shapes_base(root: Path) -> Path:
    """SHAPES_BASE in `root` (not a repository yet), with a binary file and a Latin-1 name."""
    write_repo(root, SHAPES_BASE)
    (root / "image.bin").write_bytes(b"\x00\x01binary\x00")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    return root


def change_every_way(root: Path) -> None:
    """Change a tree written by `write_shapes_base` in every way."""
    (root / "edit.py").write_text(
        "".join(f"line {n}\n" if n % 7 else f"changed {n}\r\n" for n in range(32))
    )
    (root / "gone.txt").unlink()
    (root / "nonl.txt").write_text("last\nmore")
    (root / "mode.sh").chmod(0o755)
    (root / "old_name.py").rename(root / "new_name.py")
    (root / "blank.txt").write_text("a\n\nB\n\nc\n")
    (root / "tab\tname.txt").write_text("t\nu\u2028v\n")
    (root / "image.bin").write_bytes(b"\x00\x02binary\x00")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\nand more\n")
    (root / "new_empty").write_text("")
    (root / '\u00e9t\u00e9 "quoted".txt').write_text("new\n")
    (root / "sub/deep/x.txt").write_text("x\ny\n")
    (root / "sub/link").symlink_to("kept.txt")
