"""The reference patch an export writes holds every file the solution changes, also one the copy
left with the size and the times git's index remembers (a change git's stat check cannot see)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from stepswitch.bench.harbor_solution import reference_patch


def test_a_solution_file_of_the_same_size_and_second_is_in_the_patch(tmp_path: Path) -> None:
    repo, files = tmp_path / "repo", tmp_path / "files"
    repo.mkdir()
    files.mkdir()
    (repo / "calc.py").write_text("def sub(a, b):\n    return a + b\n")
    (files / "calc.py").write_text("def sub(a, b):\n    return a - b\n")  # the same size
    past = int(time.time()) - 60
    for path in (repo / "calc.py", files / "calc.py"):
        os.utime(path, (past, past))  # the same second, well before the index is written

    patch = reference_patch(repo, files, (), tmp_path / "scratch")

    assert "-    return a + b\n+    return a - b\n" in patch
